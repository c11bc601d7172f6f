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


def latency(world: World, text_only: object, with_behaviour: object, run: Path, rounds: int = 3) -> None:
    """p50/p99 of in-process searches (one thread) served by the text-feature judgment ranker and by the
    judgments + behaviour ranker (the behaviour tables of ``run``'s bucket), interleaved over the same
    queries so both see the same machine load: ``rounds`` passes over every fifth dev query, the two
    searches of a query in alternating order (the second of a pair finds the query's retrieval caches
    warm), so each p99 is over ``rounds`` x 1,196 searches."""
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
    names = list(engines)
    for r in range(rounds):
        for i, q in enumerate(sample):
            for name in names if (i + r) % 2 == 0 else names[::-1]:
                t = time.perf_counter()
                engines[name].search(TENANT, SearchQuery(q, size=10))
                times[name].append((time.perf_counter() - t) * 1000)
    for name, values in times.items():
        print(
            f"search with a ranker on {name} (in process, lexical): p50 {pct(values, 50):.2f} ms, "
            f"p99 {pct(values, 99):.2f} ms over {len(values)} searches"
        )
    base, behaved = (times[n] for n in names)
    print(f"p99 with behaviour features / without: {pct(behaved, 99) / pct(base, 99):.3f}")
