"""In-process search latency of a ranker with and without behaviour features (bench_click_learning)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

TENANT = "homedepot"


class World(Protocol):
    """What the latency run reads of bench_click_learning's world (its catalog, index and queries), named
    here so this module does not import the bench that calls it."""

    work: Path
    tenants: Any
    indexes: Any
    queries: list[str]


def latency(world: World, text_only: object, with_behaviour: object, run: Path) -> None:
    """p50/p99 of in-process searches (one thread) served by the text-feature judgment ranker and by the
    judgments + behaviour ranker (the behaviour tables of ``run``'s bucket), interleaved over the same
    queries so both see the same machine load."""
    from aisle.core.storage import open_blob_store
    from aisle.search.engine import SearchEngine
    from aisle.search.query import SearchQuery
    from aisle.search.ranking.behaviour import BEHAVIOUR_FEATURES
    from aisle.search.ranking.features import FEATURES
    from aisle.search.ranking.store import RankerRecord, RankerStore
    from aisle.vectors.search import VectorSearch
    from aisle.vectors.store import VectorStore
    from bench.bench_vectors import pct

    store = open_blob_store(f"file://{run / 'bucket'}")
    engines = {}
    for name, booster, features in (
        ("text features", text_only, list(FEATURES)),
        ("text + behaviour features", with_behaviour, list(FEATURES) + list(BEHAVIOUR_FEATURES)),
    ):
        rankers = RankerStore(store, check_every=3600)
        rankers.save(
            TENANT,
            booster.model_to_string(),
            RankerRecord(version=0, features=features, queries=0, candidates=0),
        )  # type: ignore[attr-defined]
        engine = SearchEngine(
            world.tenants, world.indexes, VectorSearch(VectorStore(world.work / "data")), rankers=rankers
        )
        # the first search reads the pointer (this version) and keeps it for check_every: each engine
        # serves its own version of the one tenant
        engine.search(TENANT, SearchQuery("drill", size=10))
        engines[name] = engine
    sample = world.queries[::5]
    times: dict[str, list[float]] = {name: [] for name in engines}
    for q in sample[:50]:
        for engine in engines.values():
            engine.search(TENANT, SearchQuery(q, size=10))
    for q in sample:
        for name, engine in engines.items():
            t = time.perf_counter()
            engine.search(TENANT, SearchQuery(q, size=10))
            times[name].append((time.perf_counter() - t) * 1000)
    for name, values in times.items():
        print(
            f"search with a ranker on {name} (in process, lexical): p50 {pct(values, 50):.2f} ms, "
            f"p99 {pct(values, 99):.2f} ms over {len(values)} queries"
        )
