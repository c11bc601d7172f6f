"""The word-prefix index against a brute-force scan, on both its paths (slices and heavy heads)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from aisle.search.suggest import prefix_index
from aisle.search.suggest.prefix_index import PrefixIndex

WORDS = ["nike", "nice", "night", "men", "mens", "black", "blue", "shoe", "shoes", "shirt", "short", "sho"]


def _keys(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(1, 5))) for _ in range(n)]


def _brute(keys: list[str], typed: list[str]) -> list[int]:
    return [i for i, k in enumerate(keys) if all(any(w.startswith(t) for w in k.split()) for t in typed)]


@pytest.mark.parametrize("heavy", [10_000, 8])
def test_exact_prefix_search_matches_a_scan(monkeypatch: pytest.MonkeyPatch, heavy: int) -> None:
    monkeypatch.setattr(prefix_index, "HEAVY", heavy)
    monkeypatch.setattr(prefix_index, "HEAVY_KEEP", 10_000)  # heads keep everything: results are exact
    keys = _keys(300)
    index = PrefixIndex(keys, [0, 100, 300])
    assert (heavy == 8) == bool(index.heavy)
    for typed in (
        ["n"],
        ["ni"],
        ["sho"],
        ["s", "b"],
        ["nike", "sh"],
        ["men", "bl", "s"],
        ["x"],
        ["mens", "nig"],
    ):
        ids, first = index.search([index.exact(t) for t in typed])
        assert ids.tolist() == _brute(keys, typed), typed
        expected_first = [keys[i].split()[0].startswith(typed[0]) for i in ids]
        assert first.tolist() == expected_first


def test_heavy_heads_keep_the_best_ids_of_each_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefix_index, "HEAVY", 8)
    monkeypatch.setattr(prefix_index, "HEAVY_KEEP", 3)
    keys = _keys(300)
    index = PrefixIndex(keys, [0, 100, 300])
    ids = index.ids(index.exact("s"))
    full = np.asarray(_brute(keys, ["s"]))
    assert ids.tolist() == full[full < 100][:3].tolist() + full[full >= 100][:3].tolist()


def test_typo_expansion_keeps_the_first_letter() -> None:
    index = PrefixIndex(["nike men shoes", "mike shoes", "nice shirt"], [0, 3])
    match = index.fuzzy("nkie", 1)
    assert "nike" in match.prefixes and not any(p.startswith("m") for p in match.prefixes)
    ids, _ = index.search([match])
    assert 0 in ids.tolist() and 1 not in ids.tolist()
    assert index.search([index.exact("nkie")])[0].tolist() == []
