"""Honest no-results (issue 43) on the demo tenants as ``make run`` builds them (text vectors, the Home
Depot ranker, hybrid on): nonsense answers nothing, a query whose words miss but whose meaning hits
still finds its products, and the Home Depot dev queries keep their answers.

- Nonsense: :data:`HELD_OUT`, keyboard mashes and random strings no test sees (the tests keep their own
  set, ``tests/search/test_honest_no_results.py``), plus the tests' set; each query's total on both
  tenants, which must be 0. Before issue 43, ``qzxv 8f3a2kj`` answered 19,560 Home Depot products and
  ``qwrtzp`` 100 on both tenants (the issue's figures).
- Meaning hits: :data:`MEANING`, words the catalog lacks for products it holds; the total, the stage and
  the first titles.
- The similarity floors each tenant's table was calibrated with (``queryGraph.hybrid_floor``).
- Home Depot dev queries that answer nothing, with the tenant's floor and with the floor off
  (``hybrid.min_similarity = -1``: every nearest product joins, as before).

The demo is ``bench_vs_typesense``'s (``var/bench-demo``, built once, minutes; ``AISLE_BENCH_DEMO``).
``python -m bench --only bench_no_results``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.search.test_honest_no_results import NONSENSE

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.search.engine import SearchEngine
from aisle.search.query import SearchQuery
from bench import vs_typesense_served as served

HELD_OUT = [
    "kxqv",
    "plmokn",
    "vbnmjk",
    "jjjjkkk",
    "wxqp 3k9z",
    "fghjkl",
    "qpwoei",
    "zmxncb",
    "9x7q2w",
    "uiopzx",
    "ghjqwz",
    "bvcxzl",
    "kkzzqq",
    "xcvq lkpz",
    "qw9e8r",
    "pzlxm",
    "nbvqwe",
    "hgfdsaq",
    "zzzzzz",
    "mnbvcxz lkjh",
    # added after a run of the ones above, never searched while the engine was changed (9x7q2w above
    # revealed that a unit the normaliser writes was spell-corrected; it is held out no longer)
    "vqpz lrtk",
    "hjkqx",
    "plqw 7x3",
    "dfgwzq",
    "rtyqpz",
    "xnbq wert",
    "kqzw 55t",
    "cvbxq",
    "yqpl zmkd",
    "wzxqj 2k",
]
MEANING = {
    "fashion": ["wristwatch", "timepiece", "eyeglasses", "timepiece for my wrist"],
    "homedepot": ["icebox", "timepiece", "something to cut wood"],
}


def main(data_dir: Path) -> None:
    env = served.demo_env(data_dir)
    settings = Settings(
        storage_url=env["AISLE_STORAGE_URL"], data_dir=Path(env["AISLE_DATA_DIR"]), auth="off"
    )
    engine = SearchEngine.from_settings(settings, open_blob_store(settings.storage_url))
    engine.warm_up()
    print("nonsense queries (held out from the tests, then the tests' set): results on each tenant")
    print(f"{'query':<18} {'fashion':>8} {'homedepot':>10}")
    failures = 0
    for query in [*HELD_OUT, *NONSENSE]:
        totals = [engine.search(t, SearchQuery(query, size=10)).total for t in ("fashion", "homedepot")]
        failures += sum(1 for t in totals if t)
        print(f"{query:<18} {totals[0]:>8} {totals[1]:>10}")
    n = len(HELD_OUT) + len(NONSENSE)
    print(f"nonsense answering 0 results: {2 * n - failures} of {2 * n} searches (goal: all)")
    print("\nwords that miss, meaning that hits: total, stage, floor, first titles")
    for tenant, queries in MEANING.items():
        for query in queries:
            result = engine.search(tenant, SearchQuery(query, size=3))
            graph = result.query_graph
            floor = graph.hybrid_floor
            where = (
                f"{floor.encoder} floor {floor.floor:.3f}, {floor.below} below" if floor else "no floor asked"
            )
            titles = "; ".join(str(p.get("title"))[:40] for p in result.products)
            print(f"{tenant:<10} {query!r:<26} {result.total:>5} {graph.stage:<8} {where} | {titles}")
    _dev_no_results(engine, data_dir)


def _dev_no_results(engine: SearchEngine, data_dir: Path) -> None:
    """Home Depot dev queries answering nothing, with the calibrated floor and with it off."""
    queries = sorted(
        {line.split("\t")[-1].strip() for line in (data_dir / "homedepot" / "queries_dev.txt").open()} - {""}
    )
    config = engine.tenants.config("homedepot")
    off = config.global_.hybrid.model_copy(update={"min_similarity": -1.0})
    floor_off = dataclasses.replace(config, global_=config.global_.model_copy(update={"hybrid": off}))
    empty = {"calibrated floor": 0, "floor off (-1)": 0}
    for query in queries:
        empty["calibrated floor"] += engine.search("homedepot", SearchQuery(query, size=10)).total == 0
        found = engine.search("homedepot", SearchQuery(query, size=10), config=floor_off)
        empty["floor off (-1)"] += found.total == 0
    print(f"\nHome Depot dev queries ({len(queries)}) answering no results:")
    for label, count in empty.items():
        print(f"  {label:<18} {count} ({count / max(1, len(queries)):.2%})")
