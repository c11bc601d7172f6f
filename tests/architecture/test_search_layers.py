"""Inside the search engine, imports point down too: a layer table of ``aisle.search``'s own parts.

A *part* is a sub-package (``stages``, ``rules``, ...) or a module directly under ``aisle/search``.
:data:`LAYERS` lists them lowest first; a part may import its own modules and any part of a lower
layer, never one of its own layer or above. Every import counts, lazy or under ``TYPE_CHECKING`` (as in
``test_layers.py``). A new part must be placed in the table before it is imported.

    python -m pytest tests/architecture -q

names each import that runs up the table (issue 27: ten did, mostly to reach the query helpers that
lived inside ``stages/``; they now live in ``query/``, beneath the stages).
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.test_layers import SRC, _graph

LAYERS: list[set[str]] = [
    {"model", "hits", "normalize"},  # the response's shapes, result rows, text normalisation
    {"synonyms", "spelling", "attributes", "paging", "querylog"},  # what reading a query draws on
    {"index", "bulk_hold", "child_builds"},  # the tantivy index; when a large import waits; build children
    {"opening"},  # a catalog version's index opened, what the host lacks built first
    {"query", "indexes"},  # the request value and the query helpers; the open indexes
    {"filter_rows", "rules", "external", "follower"},  # filters as rows, rules, external search; the log
    {"context", "experiments"},  # what one search carries through the stages; an A/B variant's arm
    {"ranking", "suggest"},  # learned ranking features and models; autocomplete
    {"stages"},  # the pipeline's stages
    {"pipeline"},  # the stages run in order
    {"semantic", "browse", "experiment_promotion"},  # vector results; catalog browsing; A/B promotion
    {"engine"},  # the front door
    {"evaluation", "build_child"},  # offline: NDCG on judgments; a build child's entry point
    {"training"},  # offline: fitting the learned ranker
]
"""``aisle.search``'s parts, lowest layer first."""

LAYER = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def _part(module: str) -> str | None:
    """The part of ``aisle.search`` a module belongs to (None: outside it, or the package itself)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["aisle", "search"] else None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``"importer -> imported (layer a -> b)"`` for each import inside ``aisle.search`` that does not
    point to a lower layer (or within its own part)."""
    wrong = []
    for module, targets in graph.items():
        source = _part(module)
        if source is None:
            continue
        for target in targets:
            dest = _part(target)
            if dest is None or dest == source:
                continue
            if LAYER[dest] >= LAYER[source]:
                wrong.append(f"{module} -> {target} (layer {LAYER[source]} {source} -> {LAYER[dest]} {dest})")
    return sorted(wrong)


def test_every_part_of_search_has_a_layer() -> None:
    root = SRC / "aisle" / "search"
    found = {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    found |= {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    missing = found - set(LAYER)
    assert not missing, f"parts of aisle.search missing from LAYERS: {sorted(missing)}"
    assert len(LAYER) == sum(len(parts) for parts in LAYERS), "a part is listed twice"


def test_no_import_inside_search_runs_up_its_layers() -> None:
    wrong = upward_imports(_graph())
    assert not wrong, "imports inside aisle.search against its layers:\n" + "\n".join(wrong)


def test_the_search_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """The check itself: a stage reached from a rule (upward) and a sibling import are both named."""
    graph = {
        "aisle.search.rules.book": {"aisle.search.stages.understand", "aisle.search.model"},
        "aisle.search.ranking.features": {"aisle.search.suggest.registry", "aisle.search.context"},
        "aisle.search.stages.rules": {"aisle.search.rules.book", "aisle.search.stages.filters"},
    }
    assert upward_imports(graph) == [
        "aisle.search.ranking.features -> aisle.search.suggest.registry (layer 7 ranking -> 7 suggest)",
        "aisle.search.rules.book -> aisle.search.stages.understand (layer 5 rules -> 8 stages)",
    ]
