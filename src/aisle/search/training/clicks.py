"""Train a tenant's learned ranker from shoppers' clicks, not judgments (counterfactual learning to rank).

Input: the behaviour job's click table (per query, product and position shown: impressions and clicks;
:func:`aisle.behaviour.tables.click_table`) and, when the log allowed, the examination propensity of
each position estimated from it (:mod:`aisle.behaviour.propensity`). Nothing about how the clicks came
about is known here.

Labels: per (query, product) a smoothed click rate turned into a grade 0..4 (:func:`click_grades`).
*Naive*: clicks per impression, which rewards whatever was shown on top (the ranker learns to repeat its
own order). *Debiased*: clicks per examination, ``clicks / sum(propensity of the position at each
impression)`` (inverse propensity weighting: Joachims, Swaminathan and Schnabel, WSDM 2017). Without
propensities (a log of one ranking) the debiased learner instead gives LightGBM each row's position and
lets it estimate the bias while it learns (unbiased LambdaMART: Hu, Wang, Peng and Li, WWW 2019;
LightGBM's ``position`` column, 4.1 and later).

Rows: only the products shoppers were shown (a product never shown says nothing either way), with the
same query-relative features as the judgment ranker (:mod:`aisle.search.ranking.features`), so the model
applies to queries without traffic. It is served only within the depth shoppers were shown
(:func:`shown_depth`, the record's ``rerank_depth``): below it lie candidates unlike any row it learned
from (never shown, so no behaviour either), and letting it reorder them cost NDCG@10 (SIMULATED, 1M
searches, two logs: -0.005 to -0.009 reordering every candidate, +0.093 within the first 10;
``bench/bench_click_learning.py``).

Deployment gate: below :data:`MIN_SEARCHES` searches with :data:`MIN_CLICKS` clicks the ranker is trained
and saved but not put in use (a thin log makes a ranker worse than none;
see ``bench/bench_click_learning.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenancy import Tenants
from aisle.search.evaluation.ndcg import Qrels
from aisle.search.ranking.behaviour import BEHAVIOUR_FEATURES, BehaviourLookup
from aisle.search.ranking.features import FEATURES
from aisle.search.ranking.store import RankerRecord, RankerStore
from aisle.search.training.ranker import (
    DEFAULT_PARAMS,
    DEFAULT_ROUNDS,
    Progress,
    QuerySet,
    collect,
    label,
    tenant_pipeline,
)

if TYPE_CHECKING:
    import lightgbm

PRIOR_WEIGHT = 10.0
"""Pseudo-impressions of the smoothing prior of a pair's click rate."""
TOP_QUANTILE = 0.95
"""A rate at this quantile of well-seen pairs (or above) is grade 4."""
MIN_SEARCHES = 1_000_000
"""Searches below which a click-trained ranker is not deployed, nor put on trial (the traffic
threshold). Measured on simulated shoppers (``bench/bench_click_learning.py``, Home Depot dev queries,
served within its :func:`shown_depth`): with the behaviour features, NDCG@10 -0.072 at 10k searches,
-0.001 at 100k, +0.092 and +0.093 at 1M on two logs (the judgment ranker gains +0.0146). Necessary, not
sufficient: past it the ranker goes live only by winning an A/B trial against the live setting
(``aisle.behaviour.trials``)."""
MIN_CLICKS = 100_000
"""Clicks below which a click-trained ranker is not deployed (the 1M simulated searches had 401k)."""


@dataclass(frozen=True)
class ClickPairs:
    """Per (query, product) pair: impressions, clicks, examinations and mean position shown (1-based)."""

    queries: list[str]
    products: list[str]
    impressions: np.ndarray
    clicks: np.ndarray
    examinations: np.ndarray
    position: np.ndarray


def click_pairs(
    queries: Sequence[str],
    products: Sequence[str],
    positions: np.ndarray,
    impressions: np.ndarray,
    clicks: np.ndarray,
    propensities: Sequence[float] | None = None,
) -> ClickPairs:
    """Aggregate click-table rows (one per query, product, position) per (query, product).

    ``examinations`` is ``sum(impressions * propensity[position])`` (positions past the estimate take its
    last value), or the impressions when ``propensities`` is None.
    """
    positions = np.asarray(positions, dtype=np.int64)
    impressions = np.asarray(impressions, dtype=np.float64)
    clicks = np.asarray(clicks, dtype=np.float64)
    if propensities:
        theta = np.asarray(propensities, dtype=np.float64)
        exam = impressions * theta[np.clip(positions, 1, len(theta)) - 1]
    else:
        exam = impressions
    key: dict[tuple[str, str], int] = {}
    idx = np.fromiter(
        (key.setdefault((q, p), len(key)) for q, p in zip(queries, products, strict=True)),
        dtype=np.int64,
        count=len(positions),
    )
    n = len(key)
    imp = np.bincount(idx, weights=impressions, minlength=n)
    return ClickPairs(
        [q for q, _ in key],
        [p for _, p in key],
        imp,
        np.bincount(idx, weights=clicks, minlength=n),
        np.bincount(idx, weights=exam, minlength=n),
        np.bincount(idx, weights=impressions * positions, minlength=n) / np.maximum(imp, 1),
    )


def click_grades(pairs: ClickPairs, *, corrected: bool) -> np.ndarray:
    """Grade 0..4 of each pair from its smoothed click rate (per examination when ``corrected``).

    ``rate = (clicks + A * r0) / (d + A)``, ``d`` impressions or examinations, ``r0 = sum(clicks) /
    sum(d)``, ``A`` = :data:`PRIOR_WEIGHT`; grade ``round(4 * min(1, rate / top))`` with ``top`` the
    :data:`TOP_QUANTILE` rate of pairs with ``d >= A``.
    """
    d = pairs.examinations if corrected else pairs.impressions
    if len(d) == 0:
        return np.zeros(0, dtype=np.int32)
    r0 = float(pairs.clicks.sum() / max(d.sum(), 1e-9))
    rate = (pairs.clicks + PRIOR_WEIGHT * r0) / (d + PRIOR_WEIGHT)
    seen = rate[d >= PRIOR_WEIGHT]
    top = float(np.quantile(seen if len(seen) else rate, TOP_QUANTILE)) or 1.0
    return np.rint(4.0 * np.minimum(1.0, rate / top)).astype(np.int32)


def shown_only(
    qs: QuerySet, ids: list[str], grades: dict[tuple[str, str], int], positions: dict[tuple[str, str], float]
) -> QuerySet:
    """``qs`` cut to the rows of products shown for their query (the keys of ``grades``), labelled with
    their grade, with their mean position shown in ``positions``; queries left with fewer than 2 rows
    are dropped (nothing to rank)."""
    out = QuerySet()
    for i, query in enumerate(qs.queries):
        rows = [j for j, o in enumerate(qs.ords[i].tolist()) if (query, ids[o]) in grades]
        if len(rows) < 2:
            continue
        keys = [(query, ids[o]) for o in qs.ords[i][rows].tolist()]
        out.queries.append(query)
        out.ords.append(qs.ords[i][rows])
        out.features.append(qs.features[i][rows])
        out.labels.append(np.asarray([grades[k] for k in keys], dtype=np.int32))
        out.pipeline_top.append(qs.pipeline_top[i])
        out.positions.append(np.asarray([positions[k] for k in keys], dtype=np.float64))
    return out


def fit_clicks(qs: QuerySet, *, position_debiased: bool, rounds: int = DEFAULT_ROUNDS) -> lightgbm.Booster:
    """LambdaMART on a :func:`shown_only` set; with ``position_debiased`` each row's (rounded) position
    goes to LightGBM, which estimates the position bias jointly (unbiased LambdaMART)."""
    import lightgbm

    keep = [i for i in range(len(qs.queries)) if len(qs.ords[i])]
    x = np.vstack([qs.features[i] for i in keep])
    y = np.concatenate([qs.labels[i] for i in keep])
    # leaves of at least 50 rows, fewer on a small log (a shop's first few hundred graded pairs)
    params: dict[str, Any] = DEFAULT_PARAMS | {"min_data_in_leaf": max(5, min(50, len(y) // 20))}
    position = None
    if position_debiased:
        shown = np.concatenate([qs.positions[i] for i in keep])
        position = np.clip(np.rint(shown), 1, 1000).astype(np.int32) - 1
        params = params | {"lambdarank_position_bias_regularization": 0.0}
    names = list(FEATURES) + (list(BEHAVIOUR_FEATURES) if x.shape[1] > len(FEATURES) else [])
    data = lightgbm.Dataset(
        x, y, group=[len(qs.ords[i]) for i in keep], position=position, feature_name=names
    )
    return lightgbm.train(params, data, num_boost_round=rounds)


SHOWN_SHARE = 0.01
"""A position counts as shown when it had at least this share of position 1's impressions."""


def shown_depth(positions: np.ndarray, impressions: np.ndarray) -> int | None:
    """The deepest position (1-based) shoppers were shown in a click table: the last position with at
    least :data:`SHOWN_SHARE` of position 1's impressions (a rare deep page does not count); None for an
    empty table. ``positions``, ``impressions`` (n,): the table's rows."""
    positions = np.asarray(positions, dtype=np.int64)
    if len(positions) == 0 or positions.max() < 1:
        return None
    per = np.bincount(np.clip(positions, 0, None), weights=np.asarray(impressions, dtype=np.float64))
    top = per[1] if len(per) > 1 else 0.0
    shown = np.flatnonzero(per[1:] >= SHOWN_SHARE * top) + 1 if top > 0 else np.zeros(0, dtype=np.int64)
    return int(shown.max()) if len(shown) else None


def may_deploy(searches: int, clicks: int) -> bool:
    """Whether a click-trained ranker may be put in use: the traffic threshold (:data:`MIN_SEARCHES`
    searches and :data:`MIN_CLICKS` clicks in the log it learned from)."""
    return searches >= MIN_SEARCHES and clicks >= MIN_CLICKS


@dataclass(frozen=True)
class ClickLog:
    """What a tenant's behaviour job hands the trainer: the click table's columns (one row per query,
    product and position shown), the propensities estimated from it (None: one ranking only), and the
    log's searches and clicks (the traffic threshold's figures)."""

    queries: list[str]
    products: list[str]
    positions: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    propensities: list[float] | None
    searches: int
    total_clicks: int


def train_click_ranker(
    tenants: Tenants,
    tenant: str,
    data_dir: Path,
    log: ClickLog,
    *,
    judgments: Qrels | None = None,
    rounds: int = DEFAULT_ROUNDS,
    use: bool = True,
    progress: Progress | None = None,
    behaviour: BehaviourLookup | None = None,
) -> tuple[RankerRecord, bool]:
    """Train the tenant's ranker from its click log (debiased, see module docstring), save it as the
    next version (``source: behaviour``) and put it in use when ``use`` and the traffic threshold allow.
    ``judgments``, when the tenant has some, replace the click grade of every pair they judge; with
    ``behaviour`` (the tenant's published tables) the behaviour features join the text features.

    Returns:
        The saved record, and whether it was put in use.

    Raises:
        TenantNotFound, CatalogNotFound: from the tenant.
        BadRequest: ``behaviour_unusable`` when fewer than 10 logged queries have two graded products
            among their candidates (nothing to learn an order from).
    """
    pairs = click_pairs(
        log.queries, log.products, log.positions, log.impressions, log.clicks, log.propensities
    )
    corrected = bool(log.propensities)
    grades = click_grades(pairs, corrected=corrected)
    keyed = {(q, p): int(g) for q, p, g in zip(pairs.queries, pairs.products, grades.tolist(), strict=True)}
    where = {
        (q, p): float(x)
        for q, p, x in zip(pairs.queries, pairs.products, pairs.position.tolist(), strict=True)
    }
    for query, judged in (judgments or {}).items():
        for product, relevance in judged.items():
            if (query, product) in keyed:
                keyed[(query, product)] = label(relevance)
    index, config, pipeline = tenant_pipeline(tenants, tenant, data_dir)
    graded: Qrels = {}
    for (query, product), grade in keyed.items():
        graded.setdefault(query, {})[product] = 1.0 + grade / 2.0
    depth = config.global_.ranking.candidates
    qs = collect(pipeline, index, config, graded, candidates=depth, progress=progress, behaviour=behaviour)
    ids = list(index.product_ids())
    qs = shown_only(qs, ids, keyed, where)
    if len(qs.queries) < 10:
        raise BadRequest(
            f"tenant '{tenant}''s log has {len(qs.queries)} queries with two graded products shown "
            "(10 needed)",
            code=ErrorCode.BEHAVIOUR_UNUSABLE,
        )
    booster = fit_clicks(qs, position_debiased=not corrected, rounds=rounds)
    deploy = use and may_deploy(log.searches, log.total_clicks)
    record = RankerRecord(
        version=0,
        features=list(FEATURES) + (list(BEHAVIOUR_FEATURES) if behaviour is not None else []),
        queries=len(qs.queries),
        candidates=qs.rows,
        cv_ndcg10=None,
        baseline_ndcg10=None,
        catalog_version=index.version,
        params=DEFAULT_PARAMS
        | {"rounds": rounds, "debiasing": "propensities" if corrected else "lightgbm-position"},
        source="behaviour",
        traffic={"searches": log.searches, "clicks": log.total_clicks},
        rerank_depth=shown_depth(log.positions, log.impressions),
    )
    return RankerStore(tenants.store).save(tenant, booster.model_to_string(), record, use=deploy), deploy
