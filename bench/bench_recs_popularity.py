"""Popularity and trending in recommendations: backfill of short lists, and popularity as a feature.

Every list is what predict serves: :func:`aisle.recs.serving.rank.rank_slot` (one slot of 20 items,
the seed = the current item, the session = the items before it) over a CUSTOMERS_ALSO_VIEW model
trained on the training events only; the popularity artifact is computed from the same training
events (:func:`aisle.recs.popularity.compute_popularity`, ``now`` = the newest training event), never
from test events. Variants:

- ``model alone``: the model's own items (``strictFiltering``: no backfill);
- ``+ catalog backfill``: predict before popularity (the model's neighbours, then the seeds' categories
  in catalog order);
- ``+ catalog fill (any item)``: the catalog-order fill predict does after FILTER actions, for scale;
- ``+ catalog, popularity ties``: catalog-order backfill, equal scores broken by popularity (the
  tie-break alone);
- ``+ popular`` / ``+ trending`` backfill: the artifact's order (:mod:`aisle.recs.serving.backfill`),
  with the tie-break;
- ``+ popular (views only)``: the artifact computed with views alone (REES46 has carts, purchases);
- ``popularity feature w``: the model's top 100 re-scored ``minmax(model) + w * pct(popularity)``
  (``pct`` the percentile rank of the item's popularity), then the popular backfill.

Data: YooChoose 100k (session-rec split: 6 days train, 1 day test; every test-session prefix scores the
next item, as :func:`aisle.recs.evaluation.protocols.session_next_item`; the current item is never
recommended back, as predict excludes seeds); windows 1 and 6 days (popularity over 6, trending 1/6).
REES46 (one day, 2.8 h of events): time split, first 80 % of events train, last 20 % test; test
sessions with consecutive repeats of an item collapsed; windows 30 min and 1 day (popularity over the
day, trending 30 min / day); catalog = every product of the file with its ``category_code``
(``a.b.c`` as the path ``a > b > c``, else its ``category_id``); rolling: test on the 50-60, 60-70,
70-80 and 80-100 % quantiles of time, each trained on every event before, pooled. The model-alone
HR@20 on YooChoose is below ``aisle eval recs``'s because predict never returns the current item
(re-views are about a quarter of the next events), as its ``hr@20_current_excluded`` shows.

Measured on 2026-11-26 (2-core machine, shared; ``python -m bench --only bench_recs_popularity``):

YooChoose 100k (no categories): 10152 test events;
    model list < 20 items: 580 (5.7%), empty (cold): 22 (0.2%)
  variant                      HR@20 MRR@20  HR<20 MRR<20 HRcold  vs catalog        vs popular
  model alone                0.4375 0.1904 0.3431 0.2069 0.0000     +0/-16 p=0.000     +0/-16 p=0.000
  + catalog backfill         0.4391 0.1906 0.3707 0.2096 0.0000      +0/-0 p=1.000      +0/-0 p=1.000
  + catalog fill (any item)  0.4391 0.1906 0.3707 0.2096 0.0000      +0/-0 p=1.000      +0/-0 p=1.000
  + catalog, popularity ties 0.4391 0.1906 0.3707 0.2096 0.0000      +0/-0 p=1.000      +0/-0 p=1.000
  + popular backfill         0.4391 0.1906 0.3707 0.2096 0.0000      +0/-0 p=1.000      +0/-0 p=1.000
  + trending backfill        0.4391 0.1906 0.3707 0.2096 0.0000      +0/-0 p=1.000      +0/-0 p=1.000
  popularity feature w=0.05  0.4323 0.1895 0.3690 0.2066 0.0000   +45/-114 p=0.000   +45/-114 p=0.000
  popularity feature w=0.2   0.4175 0.1864 0.3638 0.1996 0.0000  +107/-327 p=0.000  +107/-327 p=0.000
  popularity feature w=0.5   0.3911 0.1817 0.3569 0.1951 0.0000  +143/-631 p=0.000  +143/-631 p=0.000
REES46 time split 80/20 (categories): 1460 test events;
    model list < 20 items: 1011 (69.2%), empty (cold): 481 (32.9%)
  variant                      HR@20 MRR@20  HR<20 MRR<20 HRcold  vs catalog        vs popular
  model alone                0.1966 0.0886 0.0999 0.0504 0.0000    +0/-175 p=0.000    +0/-191 p=0.000
  + catalog backfill         0.3164 0.1088 0.2730 0.0796 0.2640      +0/-0 p=1.000     +5/-21 p=0.002
  + catalog fill (any item)  0.3164 0.1088 0.2730 0.0796 0.2640      +0/-0 p=1.000     +5/-21 p=0.002
  + catalog, popularity ties 0.3164 0.1088 0.2730 0.0796 0.2640      +0/-0 p=1.000     +5/-21 p=0.002
  + popular backfill         0.3274 0.1120 0.2888 0.0841 0.2911     +21/-5 p=0.002      +0/-0 p=1.000
  + trending backfill        0.3205 0.1109 0.2789 0.0826 0.2807    +22/-16 p=0.418     +2/-12 p=0.013
  + popular (views only)     0.3247 0.1118 0.2849 0.0839 0.2848     +18/-6 p=0.023      +0/-4 p=0.125
  popularity feature w=0.05  0.3301 0.1121 0.2888 0.0839 0.2911    +31/-11 p=0.003     +10/-6 p=0.454
  popularity feature w=0.2   0.3308 0.1126 0.2829 0.0837 0.2911    +37/-16 p=0.005    +17/-12 p=0.458
  popularity feature w=0.5   0.3295 0.1129 0.2819 0.0836 0.2911    +40/-21 p=0.020    +20/-17 p=0.743
REES46 rolling: test 50-60/60-70/70-80/80-100 %, each trained on all before: 3324 test events;
    model list < 20 items: 2541 (76.4%), empty (cold): 1256 (37.8%)
  variant                      HR@20 MRR@20  HR<20 MRR<20 HRcold  vs catalog        vs popular
  model alone                0.1856 0.0866 0.1118 0.0604 0.0000    +0/-489 p=0.000    +0/-517 p=0.000
  + catalog backfill         0.3327 0.1144 0.3042 0.0967 0.2890      +0/-0 p=1.000    +15/-43 p=0.000
  + catalog fill (any item)  0.3327 0.1144 0.3042 0.0967 0.2890      +0/-0 p=1.000    +15/-43 p=0.000
  + catalog, popularity ties 0.3327 0.1144 0.3042 0.0967 0.2890      +0/-0 p=1.000    +15/-43 p=0.000
  + popular backfill         0.3412 0.1160 0.3152 0.0989 0.3057    +43/-15 p=0.000      +0/-0 p=1.000
  + trending backfill        0.3363 0.1146 0.3089 0.0970 0.3025    +50/-38 p=0.241    +12/-28 p=0.017
  + popular (views only)     0.3403 0.1157 0.3140 0.0985 0.3041    +41/-16 p=0.001      +1/-4 p=0.375
  popularity feature w=0.05  0.3436 0.1163 0.3156 0.0990 0.3057    +58/-22 p=0.000     +15/-7 p=0.134
  popularity feature w=0.2   0.3439 0.1168 0.3137 0.0991 0.3057    +72/-35 p=0.000    +30/-21 p=0.262
  popularity feature w=0.5   0.3418 0.1165 0.3117 0.0987 0.3057    +74/-44 p=0.007    +32/-30 p=0.899

(HR<20 / MRR<20: the events whose model-alone list is short; HRcold: those where it is empty; "vs":
paired exact sign test of the hits, events only this variant hit / only the other hit, two-sided p.)
Reading: on REES46, where a third of the seeds are cold, popularity-ordered backfill beats the
catalog-order one (p = 0.002 on the 80/20 split, p < 0.001 pooled); trending does not (and loses to
popularity, p = 0.013 / 0.017), so it is an option, not the default; views alone vs the 1/3/5 weights:
no significant difference (+1/-4). Breaking equal model scores by popularity changes nothing here
(session-kNN scores rarely tie). On YooChoose only 22 events have an empty list and none is hit by
any backfill. Popularity as a feature hurts YooChoose at every weight and is within noise of the
popular backfill on REES46, so predict does not blend it (``Blended`` exists in this bench only).
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from aisle.recs.actions import PredictAction
from aisle.recs.containers import SlotConfig
from aisle.recs.models.base import ModelType, RecContext, Recommender, Scored
from aisle.recs.popularity import PopularityParams, compute_popularity
from aisle.recs.serving.models import ServedModel
from aisle.recs.serving.personal import Personal
from aisle.recs.serving.popularity import BackfillOrder, ServedPopularity
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.rank import RankOptions, compile_actions, rank_slot

K = 20
HOUR = 1 / 24


@dataclass(frozen=True)
class Variant:
    name: str
    strict: bool = False
    popularity: ServedPopularity | None = None
    order: BackfillOrder = "popular"
    feature: float = 0.0
    wide: bool = False


class Blended:
    """The model's top ``pool`` re-scored with ``weight * percentile(popularity)`` (a bench-only model)."""

    model_type = ModelType.CUSTOMERS_ALSO_VIEW

    def __init__(self, model: Recommender, popularity: ServedPopularity, weight: float, pool: int = 100):
        self.model, self.weight, self.pool = model, weight, pool
        ranked = popularity.order("popular")
        self.pct = {item: 1.0 - i / max(len(ranked), 1) for i, item in enumerate(ranked)}

    def recommend(self, ctx: RecContext) -> list[Scored]:
        got = self.model.recommend(replace(ctx, k=max(ctx.k, self.pool)))
        if not got:
            return []
        lo, hi = min(s.score for s in got), max(s.score for s in got)
        span = (hi - lo) or 1.0
        rescored = [
            Scored(s.item_id, (s.score - lo) / span + self.weight * self.pct.get(s.item_id, 0.0)) for s in got
        ]
        rescored.sort(key=lambda s: -s.score)
        return rescored[: ctx.k]


def served(tables: pl.DataFrame) -> ServedPopularity:
    return ServedPopularity.of(
        1, tables["item_id"].to_list(), tables["popularity"].to_list(), tables["trending"].to_list()
    )


def prefixes(test: pl.DataFrame) -> list[tuple[list[str], str]]:
    """Every (items so far, next item) of the test sessions, in session order."""
    out = []
    rows = test.sort(["session_id", "ts"], maintain_order=True).group_by("session_id", maintain_order=True)
    for items in rows.agg("item_id")["item_id"].to_list():
        out += [(items[: p + 1], items[p + 1]) for p in range(len(items) - 1)]
    return out


@dataclass
class Scores:
    """Per test event: the model's own list length, and each variant's hit and reciprocal rank."""

    returned: np.ndarray
    hit: dict[str, np.ndarray]
    rr: dict[str, np.ndarray]
    ms: dict[str, float]

    def __add__(self, other: Scores) -> Scores:
        cat = np.concatenate
        n = max(len(self.returned) + len(other.returned), 1)
        return Scores(
            cat([self.returned, other.returned]),
            {k: cat([v, other.hit[k]]) for k, v in self.hit.items()},
            {k: cat([v, other.rr[k]]) for k, v in self.rr.items()},
            {k: (v * len(self.returned) + other.ms[k] * len(other.returned)) / n for k, v in self.ms.items()},
        )


def evaluate(
    model: Recommender,
    table: ProductTable,
    cases: Sequence[tuple[list[str], str]],
    variants: Sequence[Variant],
) -> Scores:
    """Every variant's lists for every case, through :func:`rank_slot` as predict serves them."""
    slot = SlotConfig(slotConfigId="s", modelId="m", itemCount=K)
    returned = np.array(
        [
            len(model.recommend(RecContext(seeds=[p[-1]], k=K, session=p[:-1], exclude=frozenset([p[-1]]))))
            for p, _ in cases
        ]
    )
    wide = compile_actions([PredictAction(type="FILTER")], table, {"s"})  # allows any catalog item
    out = Scores(returned, {}, {}, {})
    for v in variants:
        rec = Blended(model, v.popularity, v.feature) if v.feature and v.popularity else model
        m = ServedModel("m", ModelType.CUSTOMERS_ALSO_VIEW, 1, rec)  # type: ignore[arg-type]
        options = RankOptions(strict=v.strict, popularity=v.popularity, backfill_order=v.order)
        hit = np.zeros(len(cases))
        rr = np.zeros(len(cases))
        t0 = time.perf_counter()
        for n, (prefix, target) in enumerate(cases):
            personal = Personal(session=tuple(prefix[:-1]))
            got = rank_slot(slot, m, [prefix[-1]], table, wide if v.wide else [], personal, set(), options)
            ids = [r.item_id for r in got]
            if target in ids:
                hit[n], rr[n] = 1.0, 1.0 / (ids.index(target) + 1)
        out.hit[v.name], out.rr[v.name] = hit, rr
        out.ms[v.name] = (time.perf_counter() - t0) * 1000 / max(len(cases), 1)
    return out


def sign_test(a: np.ndarray, b: np.ndarray) -> tuple[int, int, float]:
    """Paired exact sign test on hits: (events only ``a`` hit, only ``b`` hit, two-sided p)."""
    from scipy.stats import binomtest

    wins, losses = int(((a > 0) & (b == 0)).sum()), int(((a == 0) & (b > 0)).sum())
    p = binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    return wins, losses, float(p)


def variants(pop: ServedPopularity, views_only: ServedPopularity | None = None) -> list[Variant]:
    out = [
        Variant("model alone", strict=True),
        Variant("+ catalog backfill"),
        Variant("+ catalog fill (any item)", wide=True),
        Variant("+ catalog, popularity ties", popularity=pop, order="catalog"),
        Variant("+ popular backfill", popularity=pop),
        Variant("+ trending backfill", popularity=pop, order="trending"),
    ]
    if views_only is not None:
        out.append(Variant("+ popular (views only)", popularity=views_only))
    out += [Variant(f"popularity feature w={w}", popularity=pop, feature=w) for w in (0.05, 0.2, 0.5)]
    return out


def table_of(ids: Sequence[str], categories: Sequence[str | None] | None = None) -> ProductTable:
    frame = {"id": list(ids)} | ({"category": list(categories)} if categories is not None else {})
    return ProductTable.from_frame("bench", pl.DataFrame(frame))


def show(
    title: str, scores: Scores, base: str = "+ catalog backfill", second: str = "+ popular backfill"
) -> str:
    """The table: HR@20 / MRR@20 overall, on the short lists (model < 20 items) and the cold ones (0
    items), ms per list, and the paired sign test of each variant's hits against ``base`` and
    ``second`` (events only the variant hit / only the other hit, two-sided p)."""
    short, cold = scores.returned < K, scores.returned == 0
    n = len(scores.returned)
    lines = [
        f"{title}: {n} test events; model list < 20 items: {short.sum()} ({short.mean():.1%}), "
        f"empty (cold): {cold.sum()} ({cold.mean():.1%})",
        f"  {'variant':<27} {'HR@20':>6} {'MRR@20':>6} {'HR<20':>6} {'MRR<20':>6} {'HRcold':>6} "
        f"{'ms':>5}  vs catalog backfill      vs popular backfill",
    ]

    def mean(x: np.ndarray, mask: np.ndarray) -> float:
        return float(x[mask].mean()) if mask.any() else 0.0

    every = np.ones(n, dtype=bool)
    for name, hit in scores.hit.items():
        rr = scores.rr[name]
        tests = [sign_test(hit, scores.hit[b]) for b in (base, second) if b in scores.hit]
        lines.append(
            f"  {name:<27} {mean(hit, every):>6.4f} {mean(rr, every):>6.4f} {mean(hit, short):>6.4f} "
            f"{mean(rr, short):>6.4f} {mean(hit, cold):>6.4f} {scores.ms[name]:>5.2f}  "
            + "   ".join(f"{f'+{w}/-{lo}':>10} p={p:.3f}" for w, lo, p in tests)
        )
    text = "\n".join(lines)
    print(text, flush=True)
    return text


def yoochoose(data_dir: pathlib.Path) -> str:
    from aisle.recs.events import yoochoose_events
    from aisle.recs.training import train_also_view

    train = yoochoose_events(data_dir, "train")
    test = yoochoose_events(data_dir, "test")
    model = train_also_view(train)
    params = PopularityParams(windows=(1.0, 6.0), popularity_days=6.0, trending_days=(1.0, 6.0))
    pop = served(compute_popularity(train, params=params).items)
    catalog = train.select("item_id").unique(maintain_order=True)["item_id"].to_list()
    cases = prefixes(test.select("session_id", "item_id", "ts"))
    return show("YooChoose 100k (no categories)", evaluate(model, table_of(catalog), cases, variants(pop)))


def rees46_catalog(data_dir: pathlib.Path) -> ProductTable:
    """Every product of the file, its category the ``category_code`` path (else its ``category_id``)."""
    raw = pl.read_csv(
        data_dir / "rees46" / "events.csv", schema_overrides={"product_id": pl.Utf8, "category_id": pl.Utf8}
    )
    products = raw.group_by("product_id", maintain_order=True).agg(
        pl.col("category_code").first(), pl.col("category_id").first()
    )
    codes = zip(products["category_code"].to_list(), products["category_id"].to_list(), strict=True)
    return table_of(products["product_id"].to_list(), [c.replace(".", " > ") if c else i for c, i in codes])


def rees46_fold(data_dir: pathlib.Path, table: ProductTable, start: float, end: float) -> Scores:
    """Train on the events before quantile ``start`` of time, test on those in ``[start, end)``."""
    from aisle.recs.events import rees46_events
    from aisle.recs.training import train_also_view

    events = rees46_events(data_dir).sort("ts", maintain_order=True)
    lo = events["ts"][int(events.height * start)]
    hi = events["ts"][min(int(events.height * end), events.height - 1)] if end < 1 else float("inf")
    train = events.filter(pl.col("ts") < lo)
    test = events.filter(pl.col("ts") >= lo, pl.col("ts") < hi)
    model = train_also_view(train)
    params = PopularityParams(windows=(HOUR / 2, 1.0), popularity_days=1.0, trending_days=(HOUR / 2, 1.0))
    pop = served(compute_popularity(train, params=params).items)
    views_only = served(compute_popularity(train, params=replace(params, weights={"view": 1.0})).items)
    deduped = (  # a session's consecutive repeats of one item collapsed: predict never returns the seed
        test.sort(["session_id", "ts"], maintain_order=True)
        .filter(pl.col("item_id").ne_missing(pl.col("item_id").shift(1).over("session_id")))
        .select("session_id", "item_id", "ts")
    )
    return evaluate(model, table, prefixes(deduped), variants(pop, views_only))


def rees46(data_dir: pathlib.Path) -> list[str]:
    table = rees46_catalog(data_dir)
    split = rees46_fold(data_dir, table, 0.8, 1.0)
    out = [show("REES46 time split 80/20 (categories)", split)]
    folds = [rees46_fold(data_dir, table, q, q + 0.1) for q in (0.5, 0.6, 0.7)]
    pooled = split + folds[0] + folds[1] + folds[2]
    out.append(show("REES46 rolling: test 50-60/60-70/70-80/80-100 %, each trained on all before", pooled))
    return out


def main(data_dir: pathlib.Path) -> None:
    for name, run in (("yoochoose", yoochoose), ("rees46", rees46)):
        if not (data_dir / name).exists():
            print(f"skipped {name}: {data_dir / name} missing")
            continue
        run(data_dir)
