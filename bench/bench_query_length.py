"""The search's cost by query length, in process (issue 32: the long-query tail).

Queries: fashion product names cut to their first 1..12 words (``PER_LENGTH`` names per length, the
same names at every length that has them), size 20, facets brand / color / article_type, searched
through :class:`~aisle.search.engine.SearchEngine` on the tenant as ``make run`` builds it (the bench's
demo, :mod:`bench.vs_typesense_served`; ``AISLE_BENCH_DEMO`` moves it). Each query is searched
``ROUNDS`` times; printed per length: p50 / p99 of the process's CPU time per search
(``time.process_time``, tantivy's own threads included: robust to the other processes of a shared
machine, unlike wall time) and the median retrieve and facets stage times (wall, from the request
timings). Then Home Depot dev NDCG@10 in process on the same engine (:mod:`aisle.search.evaluation`),
to check an answer-changing optimisation against the same build.

Measured (issue 32, the bench demo, hybrid off, a loaded 2-core machine), before / after facets were
counted over retrieval's lean query: CPU p50 at 8 words 6.28 / 6.61 ms, at 12 words 11.99 / 10.84 ms
(p99 22.7 / 21.4 ms); facets stage p50 (wall) at 8 words 4.99 / 2.14 ms, at 12 words 11.28 / 3.52 ms;
Home Depot dev NDCG@10 0.4472 / 0.4472 (same build, same answers). Retrieval itself (strict, then
relaxed and typo over most of the catalog for a long product name) is what still grows with length.

Then retrieval (issue 32's long-query tail; :mod:`aisle.search.stages.retrieve`): stages built only when
the previous one did not answer, a phrase alternative its group's word covers not searched, the typo
stage one union, the relaxed and typo stages holding the query's terms within one catalog's worth of
postings (the commonest dropped from those two stages), no typo expansion of a term past 5% of the
catalog. Measured on another bench demo build (hybrid off, vectors not built), the main branch's
retrieve stage and this one alternating query by query in one process (ROUNDS 3, 40 names a length,
a shared 2-core machine at load average 7-8): CPU per search in ms, retrieve and facets stage wall p50:

=====  =============================  ============================
words  before: p50 / p99 (retr, fac)  after: p50 / p99 (retr, fac)
=====  =============================  ============================
1      0.99 / 1.38 (0.24, 0.32)       0.88 / 1.35 (0.16, 0.31)
2      1.27 / 2.90 (0.44, 0.36)       1.06 / 1.89 (0.28, 0.34)
3      1.40 / 6.07 (0.65, 0.36)       1.21 / 3.60 (0.46, 0.34)
4      3.26 / 6.69 (2.27, 0.98)       2.01 / 6.12 (1.13, 0.52)
5      3.74 / 11.27 (4.07, 1.15)      3.33 / 6.62 (2.13, 0.86)
6      5.16 / 11.06 (5.32, 1.70)      3.89 / 8.86 (3.83, 1.28)
7      5.94 / 14.05 (7.30, 1.88)      4.48 / 10.57 (6.19, 1.53)
8      7.39 / 17.84 (7.97, 5.50)      6.27 / 12.68 (6.83, 1.94)
9      8.65 / 17.88 (8.96, 5.65)      6.63 / 14.90 (7.65, 4.94)
10     10.35 / 23.46 (11.35, 7.46)    9.12 / 17.21 (9.12, 6.40)
11     13.08 / 26.18 (13.42, 8.23)    10.73 / 18.35 (10.72, 6.85)
12     14.66 / 30.15 (16.08, 8.43)    12.37 / 21.22 (13.63, 7.36)
=====  =============================  ============================

Home Depot dev NDCG@10 on that build: 0.4458 before, 0.4459 after. The cost still grows with length,
by less: tantivy reads and scores every posting of every term a union or min-should-match clause
holds (a term kept only for scoring, or behind a rare required clause, is read as much: measured), so
the relaxed and typo stages cost their terms' postings; what is left at 12 words is the phrase
"t shirt" read in every field, the typo expansions' walks of the term dictionaries (again in facet
counting) and building the scorers of 7 fields per term.

Then the typo expansions (:mod:`aisle.search.index.fuzzy`): each term's expansion found once per opened
index and searched as a union of term queries (a term set past 16), instead of tantivy's automaton
rebuilt and walked by the typo query and again by facet counting's lean query. Same answers (ids,
scores, totals and facets of 6,462 bench and Home Depot dev queries; NDCG@10 0.4459 on both sides). The
same demo build, old and new expansion alternating query by query in one process (ROUNDS 3, 40 names a
length, machine load 5-8; the union then up to 64 terms, 16 measured the same on fashion and faster on
Home Depot), CPU p50 / p99 ms (facets stage wall p50): 8 words 6.64 / 13.73 (1.90) before, 4.44 / 9.20
(0.97) after; 10 words 8.30 / 15.41 (2.36), 4.41 / 8.36 (0.93); 12 words 13.09 / 23.90 (4.01), 7.67 /
18.11 (1.54). py-spy of three long names in a loop: the typo expansion (automaton built and walked) was
16.2% of the search's samples, 1.5% after (cached expansions, query building). The per-request
freshness lookups (configuration, catalog pointer, rule book, ranker pointer) were 2.6% of those
samples, 0.6% after reading a local bucket without obstore's thread hop and keeping an unchanged
configuration object (timed around the calls: about 0.5% of wall time either way).
"""

from __future__ import annotations

import gzip
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path

import orjson

from bench.bench_search import pct

PER_LENGTH = 40
ROUNDS = 3
LENGTHS = range(1, 13)
FACETS = ("brand", "color", "article_type")


def names_by_length(data_dir: Path, seed: int = 11) -> dict[int, list[str]]:
    """``PER_LENGTH`` product names of at least 12 words' worth, cut to each length (lowercase)."""
    rng = random.Random(seed)
    with gzip.open(data_dir / "fashion" / "products.jsonl.gz") as fh:
        names = [str(orjson.loads(line)["name"]) for line in fh if b"NaN" not in line]
    long_names = [n for n in names if len(n.split()) >= max(LENGTHS)]
    picked = rng.sample(long_names, min(PER_LENGTH, len(long_names)))
    return {k: [" ".join(n.lower().split()[:k]) for n in picked] for k in LENGTHS}


def measure(engine: object, queries: dict[int, list[str]]) -> None:
    from aisle.core.timing import open_timings
    from aisle.search.query import SearchQuery

    print(f"{'words':>5}  {'CPU p50':>8}  {'CPU p99':>8}  {'retrieve p50':>12}  {'facets p50':>10}  (ms)")
    for k, qs in queries.items():
        cpu: list[float] = []
        stages: dict[str, list[float]] = defaultdict(list)
        for _ in range(ROUNDS):
            for q in qs:
                timings = open_timings()
                t = time.process_time()
                engine.search("fashion", SearchQuery(q, size=20, facets=FACETS))  # type: ignore[attr-defined]
                cpu.append((time.process_time() - t) * 1000)
                for name, s in timings:
                    stages[name].append(s * 1000)
        retrieve = statistics.median(stages["retrieve"]) if stages["retrieve"] else 0.0
        facets = statistics.median(stages["facets"]) if stages["facets"] else 0.0
        print(f"{k:>5}  {statistics.median(cpu):8.2f}  {pct(cpu, 99):8.2f}  {retrieve:12.2f}  {facets:10.2f}")


def main(data_dir: Path) -> None:
    from aisle.core.config import Settings
    from aisle.core.storage import open_blob_store
    from aisle.search.engine import SearchEngine
    from aisle.search.evaluation import evaluate, load_judgments
    from aisle.search.query import SearchQuery
    from bench.vs_typesense_served import demo_env

    env = demo_env(data_dir)
    settings = Settings(storage_url=env["AISLE_STORAGE_URL"], data_dir=env["AISLE_DATA_DIR"], auth="off")
    engine = SearchEngine.from_settings(settings, open_blob_store(settings.storage_url))
    engine.warm_up()
    engine.pipeline.budget_s = 60.0  # no stage skipped for time: the figures are the stages' own cost
    queries = names_by_length(data_dir)
    for qs in queries.values():  # warm-up
        for q in qs[:5]:
            engine.search("fashion", SearchQuery(q, size=20, facets=FACETS))
    measure(engine, queries)
    qrels = load_judgments(data_dir / "homedepot" / "judgments_dev.csv")
    report = evaluate(lambda q: [p["id"] for p in engine.search("homedepot", q).products], qrels)
    print(f"Home Depot dev NDCG@10 in process ({report.queries} queries): {report.ndcg10:.4f}")
    engine.close()
