"""MMR diversity re-ranking (Carbonell & Goldstein 1998)."""

from __future__ import annotations

from aisle.recs.diversity import mmr

SCORES = [1.0, 0.95, 0.9, 0.85, 0.5, 0.45]
CATS = ["shoes", "shoes", "shoes", "shoes", "bags", "hats"]
BRANDS = ["nike", "nike", "nike", "nike", "puma", "puma"]


def test_none_is_plain_score_order() -> None:
    assert mmr(SCORES, CATS, BRANDS, 4, "none") == [0, 1, 2, 3]


def test_higher_levels_spread_categories_and_brands() -> None:
    def distinct(level: str) -> int:
        picked = mmr(SCORES, CATS, BRANDS, 3, level)  # type: ignore[arg-type]
        return len({CATS[i] for i in picked})

    assert distinct("none") == 1
    assert distinct("low") <= distinct("medium") <= distinct("high")
    assert distinct("high") == 3


def test_first_pick_is_always_the_most_relevant() -> None:
    for level in ("low", "medium", "high"):
        assert mmr(SCORES, CATS, BRANDS, 6, level)[0] == 0  # type: ignore[arg-type]


def test_k_larger_than_candidates_and_empty() -> None:
    assert sorted(mmr(SCORES, CATS, BRANDS, 50, "high")) == list(range(6))
    assert mmr([], [], [], 5, "high") == []
