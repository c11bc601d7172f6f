"""Learning to rank from simulated shoppers' clicks (issue 30): NDCG@10 of rankers trained from the log alone.

Protocol (SIMULATED shoppers, labelled so wherever these figures appear):

- Home Depot catalog, the search pipeline as a tenant without vectors serves it (lexical), in process
  (``SearchEngine``), every answer recorded by the services' own recording code (``Outcomes`` ->
  ``Recorder`` -> Parquet log in a bucket); a query's page is searched once per served ranking and
  reused for its repeats (the engine is deterministic), the answer recorded for every search;
- queries: the dev queries, repeats drawn by a Zipf law (exponent 1.07, a fixed shuffle);
- clicks: a position-based model, examination ``(1/k)**1`` over the 10 products shown, attractiveness
  from the dev judgments (0.03 for unjudged and irrelevant products: click noise, 0.25 and 0.6 for
  relevance 2 and 3), purchases after some clicks; the parameters live in ``aisle.demo.traffic`` and the
  learners never see them;
- the loop (:func:`bench.click_traffic.simulate`): the first half of the searches is served without a
  ranker; the behaviour job's refresh then runs, a debiased click ranker (text features) is trained on
  that half and saved (not deployed) and, past :data:`bench.click_traffic.EXPLORE_AFTER`, explored as an
  A/B experiment's variant: the second half goes through the platform's experiment assignment by
  visitor, 50/50 between control (no ranker) and that ranker, each answer logged with its ``variant``
  (below the bar, the second half is served as the first). The final learners read the whole log: the
  click table and the propensities estimated from it (intervention harvesting across the experiment's
  arms, when there were two).

Rows: no ranker; naive click ranker (clicks per impression, no position); debiased click ranker (clicks
per estimated examination, or LightGBM's own position debiasing when the log had one ranking); each of
the two with the behaviour features too; the debiased one trained as the platform's
``train_ranker`` job trains it (:func:`train_as_job`: the deployed path), then that model reordering
every candidate (the failure mode a ranker served past its log's depth shows). Every click-trained
ranker learns from the products shoppers were shown only, so it is scored as it is served: reordering
the first ``rerank_depth`` candidates (the depth shown in its log,
:func:`aisle.search.training.clicks.shown_depth`), the rest in the pipeline's order. The mid-run
exploration ranker reorders every candidate (it is the bench's, to show products below the first
page). Judgment ranker;
judgments plus clicks (judgment labels, text and behaviour features, as ``aisle ranker train --source
behaviour --judgments`` trains it). Last, the in-process latency of a search served by the judgment
ranker with and without the behaviour features.
Scores: "dev": every scorable dev query (the judgment ranker 5-fold cross-validated, so no query is scored
by a model trained on its judgments); "holdout": 20% of the dev queries by hash, every learner trained on
the other 80% only (judgments or log), scored on these (a holdout query's behaviour features still come
from the log: shoppers searched it). ``--judgments PATH`` scores another judgments file
of the same format (e.g. the withheld Home Depot judgments) instead of the dev file.

    python -m bench.bench_click_learning --data-dir ../shared/data [--sizes 10000,100000] [--judgments P]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from bench.click_traffic import TENANT, Shoppers, simulate

SIZES = (10_000, 100_000, 1_000_000)


def _holdout(query: str) -> bool:
    return int(hashlib.sha1(query.encode()).hexdigest(), 16) % 5 == 0


class World(Shoppers):
    """The shoppers' catalog and queries, plus the pipeline features and scoring shared by every run."""

    def __init__(self, data_dir: Path, work: Path, judgments: Path) -> None:
        from aisle.search.evaluation import load_judgments
        from aisle.search.pipeline import SearchPipeline, default_stages
        from aisle.search.training.ranker import collect

        super().__init__(data_dir, work)
        self.score_qrels = load_judgments(judgments)
        start = time.perf_counter()
        plain = SearchPipeline(default_stages(), budget_s=5.0)
        wanted = {q: j for q, j in self.score_qrels.items() if any(r > 1 for r in j.values())}
        self.qs = collect(
            plain, self.index, self.config, wanted, candidates=self.config.global_.ranking.candidates
        )
        self.row_of = {q: i for i, q in enumerate(self.qs.queries)}
        self.holdout = [i for i, q in enumerate(self.qs.queries) if _holdout(q)]
        self.train = [i for i, q in enumerate(self.qs.queries) if not _holdout(q)]
        print(
            f"features: {len(self.qs.queries)} scorable queries ({len(self.holdout)} holdout), "
            f"{self.qs.rows} candidates in {time.perf_counter() - start:.0f} s"
        )

    def score(self, booster: object | None, which: list[int]) -> float:
        from aisle.search.evaluation import ndcg_at_k
        from aisle.search.training.ranker import ranked_ids

        out = []
        for i in which:
            q = self.qs.queries[i]
            top = self.qs.pipeline_top[i] if booster is None else ranked_ids(self.qs, i, booster, self.ids)  # type: ignore[arg-type]
            out.append(ndcg_at_k(top, self.score_qrels[q]))
        return float(np.mean(out))


def explorer(world: World, run: Path):  # type: ignore[no-untyped-def]
    """The mid-run trainer (:data:`bench.click_traffic.Explore`): the debiased click ranker on text
    features from the first half's log, saved as the next version and not put in use."""

    def explore(record) -> int | None:  # type: ignore[no-untyped-def]
        from aisle.core.storage import open_blob_store
        from aisle.search.ranking.store import RankerRecord, RankerStore

        booster, _, _ = train_from_log(world, run, record.version, corrected=True, which=None)
        if booster is None:
            return None
        saved = RankerStore(open_blob_store(f"file://{run / 'bucket'}")).save(
            TENANT,
            booster.model_to_string(),
            RankerRecord(version=0, features=[], queries=0, candidates=0),
            use=False,
        )
        return saved.version

    return explore


def train_from_log(  # type: ignore[no-untyped-def]
    world: World, run: Path, version: int, *, corrected: bool, which: set[str] | None, behaviour: bool = False
):
    """Train a ranker from the published behaviour ``version`` (click table and propensities) alone,
    on the logged queries of ``which`` (raw dev queries; None: all); with ``behaviour`` the behaviour
    features join the text features. Returns (booster or None, the candidate set to score it on, the
    depth it is served within)."""
    from aisle.behaviour.store import BehaviourStore
    from aisle.core.storage import open_blob_store
    from aisle.search.training.clicks import click_grades, click_pairs, fit_clicks, shown_depth, shown_only

    published = BehaviourStore(open_blob_store(f"file://{run / 'bucket'}"))
    table = published.table(TENANT, "clicks", version)
    record = published.current(TENANT)
    theta = record.propensities if (record is not None and corrected) else None
    pairs = click_pairs(
        table["query"].to_pylist(), table["product_id"].to_pylist(), table["position"].to_numpy(),
        table["impressions"].to_numpy(), table["clicks"].to_numpy(), theta,
    )  # fmt: skip
    grades = click_grades(pairs, corrected=theta is not None)
    raw_of: dict[str, str] = {}
    for raw, norm in sorted(world.norm.items()):
        raw_of.setdefault(norm, raw)
    keyed = {}
    positions = {}
    for q, p, g, pos in zip(
        pairs.queries, pairs.products, grades.tolist(), pairs.position.tolist(), strict=True
    ):
        raw = raw_of.get(q)
        if raw is None or raw not in world.row_of or (which is not None and raw not in which):
            continue
        keyed[(raw, p)] = int(g)
        positions[(raw, p)] = pos
    candidates = judged_set(world, run, version) if behaviour else world.qs
    qs = shown_only(candidates, world.ids, keyed, positions)
    if len(qs.queries) < 10:
        return None, candidates, None
    depth = shown_depth(table["position"].to_numpy(), table["impressions"].to_numpy())
    return fit_clicks(qs, position_debiased=corrected and theta is None), candidates, depth


def train_as_job(world: World, run: Path, version: int, which: set[str] | None):  # type: ignore[no-untyped-def]
    """The platform's own trainer on the published behaviour ``version``, as the edit service's
    ``train_ranker`` job calls it (:func:`aisle.search.training.clicks.train_click_ranker`: candidates
    collected by the tenant's pipeline over the logged queries, the behaviour features joined), on the
    log rows of ``which`` (raw dev queries; None: all). Saved in the world's bucket, never put in use
    (the simulation serves from the run's bucket). Returns the booster and its ``rerank_depth``."""
    from aisle.behaviour.rankers import click_log
    from aisle.core.storage import open_blob_store
    from aisle.search.ranking.behaviour import BehaviourTables
    from aisle.search.ranking.store import RankerStore
    from aisle.search.training.clicks import ClickLog, train_click_ranker

    store = open_blob_store(f"file://{run / 'bucket'}")
    log = click_log(store, TENANT, version)
    if which is not None:
        kept = {norm for raw, norm in world.norm.items() if raw in which}
        rows = [i for i, q in enumerate(log.queries) if q in kept]
        log = ClickLog(
            [log.queries[i] for i in rows], [log.products[i] for i in rows], log.positions[rows],
            log.impressions[rows], log.clicks[rows], log.propensities, log.searches, log.total_clicks,
        )  # fmt: skip
    record, _ = train_click_ranker(
        world.tenants, TENANT, world.work / "data", log, use=False,
        behaviour=BehaviourTables(store, check_every=0).current(TENANT),
    )  # fmt: skip
    return RankerStore(world.tenants.store, check_every=0).load(
        TENANT, record.version
    ).booster, record.rerank_depth


def judged_set(world: World, run: Path | None = None, version: int | None = None):  # type: ignore[no-untyped-def]
    """The scored queries' candidates labelled by the dev judgments (the tuning set); with a run, the
    behaviour features of its published ``version`` appended (the serving code's own
    :func:`~aisle.search.ranking.behaviour.with_behaviour`, by the query the log recorded)."""
    from aisle.core import analytics_layout as layout
    from aisle.core.storage import open_blob_store
    from aisle.search.ranking.behaviour import BehaviourLookup, with_behaviour
    from aisle.search.training.ranker import QuerySet, label

    lookup = None
    if run is not None:
        scope = open_blob_store(f"file://{run / 'bucket' / TENANT}")
        lookup = BehaviourLookup.from_parquet(
            version or 0,
            scope.get(layout.behaviour_file(version or 0, "query_product.parquet")),
            scope.get(layout.behaviour_file(version or 0, "product.parquet")),
        )
    qs = QuerySet()
    for i, q in enumerate(world.qs.queries):
        judged = world.dev.get(q, {})
        ids = [world.ids[o] for o in world.qs.ords[i].tolist()]
        x = world.qs.features[i]
        if run is not None:
            x = with_behaviour(x, lookup, world.norm.get(q, ""), ids)
        qs.queries.append(q)
        qs.ords.append(world.qs.ords[i])
        qs.features.append(x)
        qs.labels.append(np.asarray([label(judged.get(pid)) for pid in ids], dtype=np.int32))
        qs.pipeline_top.append(world.qs.pipeline_top[i])
        qs.served.append(world.qs.served[i] if world.qs.served else None)
    return qs


def _score(world: World, qs, booster, which: list[int], depth: int | None = None) -> float:  # type: ignore[no-untyped-def]
    """Mean NDCG@10 of ``booster`` over queries ``which`` of ``qs``, reordering the first ``depth``
    candidates (None: all), as serving does."""
    from aisle.search.evaluation import ndcg_at_k
    from aisle.search.training.ranker import ranked_ids

    return float(
        np.mean(
            [
                ndcg_at_k(
                    ranked_ids(qs, i, booster, world.ids, depth=depth), world.score_qrels[qs.queries[i]]
                )
                for i in which
            ]
        )
    )


def _row(name: str, dev: float, hold: float, base: tuple[float, float]) -> str:
    return f"{name:<34} {dev:.4f} ({dev - base[0]:+.4f})   {hold:.4f} ({hold - base[1]:+.4f})"


def main(
    data_dir: Path, judgments: Path | None = None, sizes: tuple[int, ...] | None = None, seed: int = 7
) -> None:
    from aisle.analytics.log import ParquetLog
    from aisle.behaviour.store import refresh
    from aisle.core.storage import open_blob_store
    from aisle.search.training.ranker import cross_validate, fit

    if sizes is None:
        sizes = tuple(
            int(x) for x in os.environ.get("AISLE_BENCH_CLICK_SIZES", ",".join(map(str, SIZES))).split(",")
        )
    work = Path(
        os.environ.get("AISLE_BENCH_CLICKS_DIR", Path(__file__).resolve().parents[1] / "var" / "bench-clicks")
    )
    work.mkdir(parents=True, exist_ok=True)
    world = World(data_dir, work, judgments or data_dir / "homedepot" / "judgments_dev.csv")
    every = list(range(len(world.qs.queries)))
    train_raw = {world.qs.queries[i] for i in world.train}
    base = (world.score(None, every), world.score(None, world.holdout))
    judged = judged_set(world)
    # the judgment ranker's figures depend only on the catalog and the judgments: kept between runs
    saved = work / f"judgment-ranker-{hashlib.sha1(str(world.score_qrels).encode()).hexdigest()[:12]}.json"
    if saved.exists():
        cv_ndcg10, j_hold = json.loads(saved.read_text())
    else:
        cv_ndcg10 = cross_validate(judged, world.score_qrels, world.ids, folds=5).ndcg10
        j_hold = world.score(fit(judged, world.train), world.holdout)
        saved.write_text(json.dumps([cv_ndcg10, j_hold]))
    print(
        "SIMULATED shoppers (clicks from the dev judgments through a position-based model); NDCG@10 on "
        f"{'the dev judgments' if judgments is None else judgments}; dev: all {len(every)} scorable queries, "
        f"holdout: {len(world.holdout)} queries no learner trained on"
    )
    print(f"{'ranker':<34} {'dev (gain)':<19} holdout (gain)")
    print(_row("no ranker", *base, base))
    print(_row("judgment ranker (dev: 5-fold CV)", cv_ndcg10, j_hold, base))
    for n in sizes:
        run = work / f"run-{n}"
        shutil.rmtree(run, ignore_errors=True)
        start = time.perf_counter()
        figures = simulate(world, run, n, explorer(world, run), seed=seed)
        record = refresh(ParquetLog(open_blob_store(f"file://{run / 'bucket'}"), run / "cache"), TENANT)
        theta = record.propensities
        print(
            f"\n{n} simulated searches (seed {seed}), {figures['clicks']} clicks "
            f"({time.perf_counter() - start:.0f} s); "
            f"mid-run click ranker: {figures['v1']}; propensities from the log: "
            + (
                ", ".join(f"{t:.2f}" for t in theta) + f" ({record.propensity_pairs} pairs)"
                if theta
                else "none (one ranking)"
            )
        )
        for name, corrected, with_behaviour in (
            ("naive click ranker", False, False),
            ("debiased click ranker", True, False),
            ("naive + behaviour features", False, True),
            ("debiased + behaviour features", True, True),
        ):
            dev_b, cands, depth = train_from_log(
                world, run, record.version, corrected=corrected, which=None, behaviour=with_behaviour
            )
            hold_b, _, _ = train_from_log(
                world, run, record.version, corrected=corrected, which=train_raw, behaviour=with_behaviour
            )
            dev_s = _score(world, cands, dev_b, every, depth) if dev_b is not None else base[0]
            hold_s = _score(world, cands, hold_b, world.holdout, depth) if hold_b is not None else base[1]
            print(_row(f"{name} @{n}", dev_s, hold_s, base))
        behaved = judged_set(world, run, record.version)
        (job_b, depth), (job_hold_b, _) = (
            train_as_job(world, run, record.version, None),
            train_as_job(world, run, record.version, train_raw),
        )
        job_dev, job_hold = (
            _score(world, behaved, job_b, every, depth),
            _score(world, behaved, job_hold_b, world.holdout, depth),
        )
        print(_row(f"as the train_ranker job @{n} (depth {depth})", job_dev, job_hold, base))
        every_dev, every_hold = (
            _score(world, behaved, job_b, every),
            _score(world, behaved, job_hold_b, world.holdout),
        )
        print(_row(f"  the same, every candidate @{n}", every_dev, every_hold, base))
        combined = judged_set(world, run, record.version)
        # AISLE_BENCH_CLICK_CV=0 skips this row's 5-fold CV (5 fits over every candidate): dev shows nan
        quick = os.environ.get("AISLE_BENCH_CLICK_CV", "1") == "0"
        both_dev = (
            float("nan") if quick else cross_validate(combined, world.score_qrels, world.ids, folds=5).ndcg10
        )
        both_hold = _score(world, combined, fit(combined, world.train), world.holdout)
        print(_row(f"judgments + behaviour features @{n}", both_dev, both_hold, base))
        last = (run, record.version, combined)
    if sizes:
        from bench.click_latency import latency

        latency(world, fit(judged), fit(last[2]), last[0])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--judgments", type=Path, default=None)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--seed", type=int, default=7, help="the simulated shoppers' random seed")
    args = parser.parse_args()
    main(args.data_dir.resolve(), args.judgments, tuple(int(x) for x in args.sizes.split(",")), args.seed)
