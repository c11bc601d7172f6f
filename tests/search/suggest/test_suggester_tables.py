"""Suggestion tables written once per host and mapped by every worker (issue 42)."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import numpy as np
import pytest

from aisle.core.mapped import MappedTables, write_tables
from aisle.core.tenant_config import AutocompleteConfiguration, TypoConfig
from aisle.search.suggest import prefix_index, registry
from aisle.search.suggest.candidates import Candidate
from aisle.search.suggest.prefix_index import PrefixIndex
from aisle.search.suggest.registry import SuggesterRegistry
from aisle.search.suggest.suggester import Suggester

WORDS = ["nike", "nice", "night", "men", "mens", "black", "blue", "shoe", "shoes", "shirt", "short", "sho"]
TYPED = ["n", "sho", "s b", "nike sh", "men bl s", "x", "nkie", "shrt", "blakc men"]


def _keys(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(1, 5))) for _ in range(n)]


@pytest.mark.parametrize("heavy", [10_000, 8])
def test_a_mapped_prefix_index_answers_as_the_built_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, heavy: int
) -> None:
    monkeypatch.setattr(prefix_index, "HEAVY", heavy)
    built = PrefixIndex(_keys(300), [0, 100, 300])
    with write_tables(tmp_path / "t") as writer:
        built.save(writer)
    tables = MappedTables.open(tmp_path / "t")
    assert tables is not None
    mapped = PrefixIndex.mapped(tables)
    assert isinstance(mapped.postings, np.memmap) and isinstance(mapped.words, np.memmap)
    assert sorted(mapped.heavy) == sorted(built.heavy) and (heavy == 8) == bool(mapped.heavy)
    for text in TYPED:
        for index in (built, mapped):
            exact = index.search([index.exact(w) for w in text.split()])
            fuzzy = index.search([index.fuzzy(w, 1) for w in text.split()])
            if index is built:
                want = exact[0].tolist(), exact[1].tolist(), fuzzy[0].tolist(), fuzzy[1].tolist()
        assert (exact[0].tolist(), exact[1].tolist(), fuzzy[0].tolist(), fuzzy[1].tolist()) == want, text


def test_a_mapped_suggester_suggests_as_the_built_one(tmp_path: Path) -> None:
    rng = random.Random(7)
    kinds = ["brand", "category", "query", "product"]
    candidates = [
        Candidate(key.title(), key, rng.choice(kinds), float(rng.randint(1, 50)), rng.randint(0, 9))  # type: ignore[arg-type]
        for key in dict.fromkeys(_keys(200))
    ]
    ac, typo = AutocompleteConfiguration(), TypoConfig()
    built = Suggester(candidates, ac, typo)
    built.save(tmp_path / "s")
    mapped = Suggester.mapped(tmp_path / "s", ac, typo)
    assert mapped is not None and len(mapped) == len(built)
    assert [mapped.type_of(i) for i in range(len(mapped))] == [built.type_of(i) for i in range(len(built))]
    for text in TYPED:
        assert mapped.suggest(text) == built.suggest(text), text
    assert any(built.suggest(t) for t in TYPED)
    assert Suggester.mapped(tmp_path / "missing", ac, typo) is None


def test_workers_of_a_host_build_the_tables_once(grocery, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    builds: list[int] = []
    real = registry.Suggester

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            builds.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(registry, "Suggester", Counting)
    workers = [SuggesterRegistry(grocery.tenants, grocery.indexes, check_every=0) for _ in range(3)]
    answers: list[list[str]] = []

    def ask(worker: SuggesterRegistry) -> None:
        answers.append([s.suggestion for s in worker.get("default").suggest("che")])

    threads = [threading.Thread(target=ask, args=(r,)) for r in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1  # one built and wrote, the others mapped what it wrote
    assert answers[0] and answers == [answers[0]] * 3
    folder = grocery.data_dir / "suggest" / "default"
    assert len(list(folder.glob("*.tables"))) == 1
    # a new configuration: new tables, the old ones removed
    grocery.tenants.write_config(
        "default", {"autocomplete_configuration.json": AutocompleteConfiguration(max_suggestions=3)}
    )
    assert len(workers[0].get("default").suggest("c")) <= 3
    assert len(builds) == 2 and len(list(folder.glob("*.tables"))) == 1
    assert workers[1].get("default").suggest("c") == workers[0].get("default").suggest("c")
    assert len(builds) == 2
