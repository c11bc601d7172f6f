"""Suggestions on a tiny grocery tenant: sources, dedup, zero-result filter, configuration, rebuilds."""

from __future__ import annotations

from pathlib import Path

from aisle.core.tenant_config import AutocompleteConfiguration, TypeSuggestionConfig
from aisle.search.querylog import import_query_log
from aisle.search.suggest.registry import SuggesterRegistry


def _pairs(registry: SuggesterRegistry, text: str, limit: int | None = None) -> list[tuple[str, str]]:
    return [(s.suggestion, s.type) for s in registry.get("default").suggest(text, limit)]


def _configure(grocery, **changes) -> None:  # type: ignore[no-untyped-def]
    files = {"autocomplete_configuration.json": AutocompleteConfiguration(**changes)}
    grocery.tenants.write_config("default", files)


def test_brands_categories_and_products_by_word_prefix(grocery) -> None:  # type: ignore[no-untyped-def]
    registry = SuggesterRegistry(grocery.tenants, grocery.indexes, check_every=0)
    assert _pairs(registry, "che")[0] == ("Cheerios Original Cereal", "product")
    assert ("Cereal", "category") in _pairs(registry, "cer")
    assert ("General Mills", "brand") in _pairs(registry, "mil")  # a later word of a brand counts
    nut = _pairs(registry, "nut")
    # "Nutella" starts with the prefix, "Honey Nut Cheerios" only has it in a later word.
    assert nut.index(("Nutella Hazelnut Spread", "product")) < nut.index(
        ("Honey Nut Cheerios Cereal", "product")
    )
    assert _pairs(registry, "gre yog")[:2] == [
        ("Whole Milk Greek Yogurt", "product"),
        ("Nonfat Greek Yogurt Plain", "product"),
    ]
    assert _pairs(registry, "zzz") == []


def test_typos_are_tolerated_after_exact_matches(grocery) -> None:  # type: ignore[no-untyped-def]
    registry = SuggesterRegistry(grocery.tenants, grocery.indexes, check_every=0)
    assert ("Cheerios Original Cereal", "product") in _pairs(registry, "cheeiros")
    assert _pairs(registry, "yougrt")[0][0].endswith("Yogurt") or ("Yogurt", "category") in _pairs(
        registry, "yougrt"
    )
    _configure(grocery, typo_tolerance=False)
    assert _pairs(registry, "cheeiros") == []


def test_query_log_entries_are_deduplicated_and_checked(grocery, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "log.csv"
    log.write_text("query,count\npeanut butter,50\nJIF,40\ngluten free bread,90\npeanut butter,5\n")
    registry = SuggesterRegistry(grocery.tenants, grocery.indexes, check_every=0)
    before = _pairs(registry, "pea")
    assert before, "no suggestion for 'pea' before the query log"
    assert all(t != "query" for _, t in before)
    assert import_query_log(grocery.tenants, "default", log) == 3
    pea = _pairs(registry, "pea")  # rebuilt: the log's version changed
    assert pea[0] == ("peanut butter", "query")
    assert _pairs(registry, "ji") == [("Jif", "brand")] + [
        p for p in _pairs(registry, "ji") if p[1] == "product"
    ]
    # the log's "gluten free bread" (90 searches) is dropped: no product has all its words, and no
    # product or attribute starts with "glu", so nothing at all is suggested
    assert _pairs(registry, "glu") == []  # no product has all its words


def test_per_type_limits_max_suggestions_and_request_limit(grocery) -> None:  # type: ignore[no-untyped-def]
    registry = SuggesterRegistry(grocery.tenants, grocery.indexes, check_every=0)
    assert len(_pairs(registry, "c")) > 3
    _configure(
        grocery,
        max_suggestions=3,
        types={
            "query": TypeSuggestionConfig(limit=5),
            "brand": TypeSuggestionConfig(enabled=False),
            "category": TypeSuggestionConfig(limit=1),
            "product": TypeSuggestionConfig(limit=2, boost=2.0),
        },
    )
    for text in ("o", "c", "h", "mil", "nut", "pea"):
        pairs = _pairs(registry, text)
        assert len(pairs) <= 3
        assert all(t != "brand" for _, t in pairs)
        assert sum(t == "category" for _, t in pairs) <= 1
        assert sum(t == "product" for _, t in pairs) <= 2
        assert len(_pairs(registry, text, limit=1)) <= 1
    assert ("Cereal", "category") in _pairs(registry, "cer")


def test_min_prefix_length(grocery) -> None:  # type: ignore[no-untyped-def]
    registry = SuggesterRegistry(grocery.tenants, grocery.indexes, check_every=0)
    assert _pairs(registry, "c")
    _configure(grocery, min_prefix_length=3)
    assert _pairs(registry, "ch") == [] and _pairs(registry, " c h ") == []
    assert _pairs(registry, "che")
