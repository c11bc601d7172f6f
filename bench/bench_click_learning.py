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
Every learner learns from the dev queries only (:mod:`bench.click_sets`): the click rankers from the log
(shoppers search nothing else), the judgment rankers from the dev judgments. What they are scored on is
the mode, printed first:

- dev (no ``--judgments``, or the dev file): the dev queries themselves. Column "dev": every scorable dev
  query (the two judgment rows 5-fold cross-validated, so no query is scored by a model trained on its
  judgments; ``AISLE_BENCH_CLICK_CV=0`` skips the second one's, printing nan); "holdout": 20% of the dev
  queries by hash, every learner trained on the other 80% only (judgments or log), scored on these (a
  holdout query's behaviour features still come from the log: shoppers searched it).
- new queries (``--judgments PATH``, another file of the same format, e.g. the withheld Home Depot
  judgments): that file's queries, whether or not shoppers searched them; the shoppers and their clicks
  are still the dev queries and judgments. Column "scored": every scorable query of the file, each learner
  trained on every dev query (the judgment rows on the dev judgments, no cross-validation: no scored
  query's judgments trained anything); "holdout": 20% of the file's queries by hash, each learner trained
  on the log rows and dev queries outside that hash. A scored query's behaviour features are looked up
  by its own normalised text, so a query nobody searched has the product features only (as served).
  The gains then say how much of each ranker's gain carries to queries nobody tuned on.

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

from bench.click_sets import World, judged_set
from bench.click_traffic import TENANT, simulate

SIZES = (10_000, 100_000, 1_000_000)


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
    world: World, run: Path, version: int, *, corrected: bool, which: set[str] | None, learn=None, scored=None
):
    """Train a ranker from the published behaviour ``version`` (click table and propensities) alone,
    on the logged queries of ``which`` (raw dev queries; None: all), their candidates in ``learn``
    (default ``world.train_qs``: text features; a :func:`judged_set` of it with the behaviour features).
    Returns (booster or None, the candidate set to score it on: ``scored``, default ``world.qs``, the
    depth it is served within)."""
    from aisle.behaviour.store import BehaviourStore
    from aisle.core.storage import open_blob_store
    from aisle.search.training.clicks import click_grades, click_pairs, fit_clicks, shown_depth, shown_only

    learn = world.train_qs if learn is None else learn
    scored = world.qs if scored is None else scored
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
        if raw is None or raw not in world.learned or (which is not None and raw not in which):
            continue
        keyed[(raw, p)] = int(g)
        positions[(raw, p)] = pos
    qs = shown_only(learn, world.ids, keyed, positions)
    if len(qs.queries) < 10:
        return None, scored, None
    depth = shown_depth(table["position"].to_numpy(), table["impressions"].to_numpy())
    return fit_clicks(qs, position_debiased=corrected and theta is None), scored, depth


def train_as_job(world: World, run: Path, version: int, which: set[str] | None):  # type: ignore[no-untyped-def]
    """The platform's own trainer on the published behaviour ``version``, as the edit service's
    ``train_ranker`` job calls it (:func:`aisle.search.training.clicks.train_click_ranker`: candidates
    collected by the tenant's pipeline over the logged queries, the behaviour features joined), on the
    log rows of ``which`` (raw dev queries, the only ones shoppers search; None: all). Saved in the
    world's bucket, never put in use (the simulation serves from the run's bucket). Returns the booster
    and its ``rerank_depth``."""
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
    world = World(data_dir, work, judgments)
    every = list(range(len(world.qs.queries)))
    train_raw = {world.train_qs.queries[i] for i in world.train}
    base = (world.score(None, every), world.score(None, world.holdout))
    judged = judged_set(world, world.train_qs)
    # the judgment ranker's figures depend only on the catalog and the judgments: kept between runs
    key = str(world.score_qrels) if not world.separate else str((world.dev, world.score_qrels))
    saved = work / f"judgment-ranker-{hashlib.sha1(key.encode()).hexdigest()[:12]}.json"
    if saved.exists():
        j_all, j_hold = json.loads(saved.read_text())
    else:
        j_all = (
            world.score(fit(judged), every)
            if world.separate
            else cross_validate(judged, world.score_qrels, world.ids, folds=5).ndcg10
        )
        j_hold = world.score(fit(judged, world.train), world.holdout)
        saved.write_text(json.dumps([j_all, j_hold]))
    if world.separate:
        print(
            f"mode: new queries (learners train on the {len(world.train_qs.queries)} dev queries and the "
            f"clicks shoppers made on them; scored on {judgments}, whether or not shoppers searched them)"
        )
    else:
        print("mode: dev (learners train on the dev queries and their clicks, and are scored on them)")
    print(
        "SIMULATED shoppers (clicks from the dev judgments through a position-based model); NDCG@10 on "
        f"{'the dev judgments' if judgments is None else judgments}; "
        + (
            f"scored: all {len(every)} scorable queries of that file, holdout: {len(world.holdout)} of "
            "them by hash, their learners trained on the dev queries outside that hash"
            if world.separate
            else f"dev: all {len(every)} scorable queries, holdout: {len(world.holdout)} queries no "
            "learner trained on"
        )
    )
    print(f"{'ranker':<34} {'scored (gain)' if world.separate else 'dev (gain)':<19} holdout (gain)")
    print(_row("no ranker", *base, base))
    j_name = "judgment ranker (dev judgments)" if world.separate else "judgment ranker (dev: 5-fold CV)"
    print(_row(j_name, j_all, j_hold, base))
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
        # dev labels and behaviour features: the training set, and the scored set (looked up by its own
        # queries: a scored query nobody searched has no query-product features)
        learn_b = judged_set(world, world.train_qs, run, record.version)
        behaved = learn_b if not world.separate else judged_set(world, world.qs, run, record.version)
        for name, corrected, with_behaviour in (
            ("naive click ranker", False, False),
            ("debiased click ranker", True, False),
            ("naive + behaviour features", False, True),
            ("debiased + behaviour features", True, True),
        ):
            sets = {"learn": learn_b, "scored": behaved} if with_behaviour else {}
            dev_b, cands, depth = train_from_log(
                world, run, record.version, corrected=corrected, which=None, **sets
            )
            hold_b, _, _ = train_from_log(
                world, run, record.version, corrected=corrected, which=train_raw, **sets
            )
            dev_s = _score(world, cands, dev_b, every, depth) if dev_b is not None else base[0]
            hold_s = _score(world, cands, hold_b, world.holdout, depth) if hold_b is not None else base[1]
            print(_row(f"{name} @{n}", dev_s, hold_s, base))
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
        # AISLE_BENCH_CLICK_CV=0 skips the dev mode's 5-fold CV here (5 fits over every candidate): nan
        quick = os.environ.get("AISLE_BENCH_CLICK_CV", "1") == "0"
        if world.separate:
            both_dev = _score(world, behaved, fit(learn_b), every)
        else:
            both_dev = (
                float("nan")
                if quick
                else cross_validate(learn_b, world.score_qrels, world.ids, folds=5).ndcg10
            )
        both_hold = _score(world, behaved, fit(learn_b, world.train), world.holdout)
        print(_row(f"judgments + behaviour features @{n}", both_dev, both_hold, base))
        last = (run, record.version, learn_b)
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
