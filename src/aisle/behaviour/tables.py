"""Behaviour features: what shoppers did with each query's answers, computed with DuckDB over the log.

From the search answers (``kind = 'search'``, each with its products in shown order) and the events
carrying their attribution token (an event id counted once), over windows of the last 7, 30 and 90
days (:data:`WINDOWS`) before ``now``:

- ``query_product``: per (query, product): ``impressions``, ``clicks``, ``carts``, ``purchases``,
  ``examinations`` (the sum over impressions of the position's examination propensity,
  :mod:`aisle.behaviour.propensity`; equal to impressions when none is known), and smoothed rates:
  ``ctr = (clicks + A * ctr0) / (impressions + A)``, ``ctr_corrected = (clicks + A * ctr0) /
  (examinations + A)`` (clicks per examination: Joachims, Swaminathan and Schnabel, WSDM 2017),
  ``cart_rate`` and ``purchase_rate`` per click likewise; ``ctr0`` is the window's overall click rate and
  ``A`` = :data:`PRIOR_WEIGHT` (additive smoothing, a Beta prior's pseudo-counts), so a pair seen twice
  is pulled to the mean and one seen a thousand times keeps its own rate;
- ``product``: per product: ``impressions, clicks, carts, purchases, ctr`` and ``trending`` (its share
  of clicks in the window over its share in the 90 days, smoothed; above 1: rising);
- ``query``: per query: ``searches``, ``no_result_rate`` (answers with ``total = 0``) and
  ``no_click_rate`` (answers without a click).

Each table has a ``window_days`` column. :func:`click_table` gives the learners their input: per
(query, product, position) impressions and clicks. The tables are Parquet files, so Spark reads them as
they are (``spark.read.parquet``) for a tenant too large for one process.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from aisle.analytics.attribution import log_view
from aisle.analytics.records import ANSWER_SCHEMA, OUTCOME_SCHEMA
from aisle.behaviour.propensity import Propensities, estimate_propensities
from aisle.core.events import CART_NAMES, EventName

WINDOWS: tuple[int, ...] = (7, 30, 90)
"""Days of each window, ending at ``now``."""
PRIOR_WEIGHT = 10.0
"""Pseudo-impressions (pseudo-clicks for per-click rates) of the smoothing prior."""
DAY_S = 86400.0


def _events(con: duckdb.DuckDBPyConnection, lo: float, hi: float) -> None:
    """TEMP tables ``shown`` (one row per product of a search answer) and ``acted`` (events on them)."""
    carts = ", ".join(f"'{t}'" for t in CART_NAMES)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE shown AS
          SELECT token, ts, query, total, coalesce(variant, '') AS variant,
                 unnest(product_ids) AS product_id, generate_subscripts(product_ids, 1) AS position
          FROM answers_log WHERE kind = 'search' AND ts >= {lo!r} AND ts < {hi!r};
        CREATE OR REPLACE TEMP TABLE answered AS
          SELECT token, ts, query, total FROM answers_log
          WHERE kind = 'search' AND ts >= {lo!r} AND ts < {hi!r};
        CREATE OR REPLACE TEMP TABLE acted AS
          SELECT s.token, s.ts, s.query, s.product_id, s.position,
                 count(*) FILTER (WHERE o.event_type = '{EventName.CLICK}') AS clicks,
                 count(*) FILTER (WHERE o.event_type IN ({carts})) AS carts,
                 count(*) FILTER (WHERE o.event_type = '{EventName.PURCHASE}') AS purchases
          FROM (SELECT event_id, any_value(event_type) AS event_type, any_value(product_id) AS product_id,
                       max(attribution_token) AS attribution_token
                FROM outcomes_log WHERE attribution_token IS NOT NULL AND ts >= {lo!r}
                GROUP BY event_id) o
          JOIN shown s ON s.token = o.attribution_token AND s.product_id = o.product_id
          GROUP BY s.token, s.ts, s.query, s.product_id, s.position;
        """
    )


def _propensity_table(con: duckdb.DuckDBPyConnection, propensities: Propensities | None) -> None:
    theta = list(propensities.theta) if propensities is not None else [1.0]
    con.register("theta_in", pa.table({"position": list(range(1, len(theta) + 1)), "theta": theta}))
    last = theta[-1]
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE theta AS
            SELECT position, theta FROM theta_in
            UNION ALL SELECT p, {last!r} FROM range({len(theta) + 1}, 1001) t(p)"""
    )


def _windowed(con: duckdb.DuckDBPyConnection, now: float, windows: Sequence[int]) -> dict[str, pa.Table]:
    a = PRIOR_WEIGHT
    parts: dict[str, list[pa.Table]] = {"query_product": [], "product": [], "query": []}
    longest = max(windows)
    for days in windows:
        since = now - days * DAY_S
        pairs = con.sql(
            f"""
            WITH imp AS (
              SELECT s.query, s.product_id, count(*) AS impressions, sum(t.theta) AS examinations
              FROM shown s JOIN theta t USING (position) WHERE s.ts >= {since!r}
              GROUP BY s.query, s.product_id),
            act AS (
              SELECT query, product_id, sum(clicks) AS clicks, sum(carts) AS carts,
                     sum(purchases) AS purchases
              FROM acted WHERE ts >= {since!r} GROUP BY query, product_id)
            SELECT i.query, i.product_id, {days} AS window_days, i.impressions,
                   coalesce(x.clicks, 0) AS clicks, coalesce(x.carts, 0) AS carts,
                   coalesce(x.purchases, 0) AS purchases, i.examinations
            FROM imp i LEFT JOIN act x USING (query, product_id)
            """
        ).to_arrow_table()
        parts["query_product"].append(_rates(con, pairs, a))
        parts["product"].append(_products(con, since, now - longest * DAY_S, days, a))
        parts["query"].append(
            con.sql(
                f"""
                SELECT a.query, {days} AS window_days, count(*) AS searches,
                       avg(CASE WHEN a.total = 0 THEN 1.0 ELSE 0.0 END) AS no_result_rate,
                       avg(CASE WHEN c.token IS NULL THEN 1.0 ELSE 0.0 END) AS no_click_rate
                FROM answered a
                LEFT JOIN (SELECT DISTINCT token FROM acted WHERE clicks > 0) c USING (token)
                WHERE a.ts >= {since!r} GROUP BY a.query ORDER BY a.query
                """
            ).to_arrow_table()
        )
    return {name: pa.concat_tables(tables) for name, tables in parts.items()}


def _rates(con: duckdb.DuckDBPyConnection, pairs: pa.Table, a: float) -> pa.Table:
    con.register("pairs_in", pairs)
    return con.sql(
        f"""
        WITH g AS (SELECT sum(clicks)::DOUBLE / greatest(sum(impressions), 1) AS ctr0,
                          sum(carts)::DOUBLE / greatest(sum(clicks), 1) AS cart0,
                          sum(purchases)::DOUBLE / greatest(sum(clicks), 1) AS buy0 FROM pairs_in)
        SELECT query, product_id, window_days, impressions, clicks, carts, purchases, examinations,
               (clicks + {a!r} * g.ctr0) / (impressions + {a!r}) AS ctr,
               (clicks + {a!r} * g.ctr0) / (examinations + {a!r}) AS ctr_corrected,
               (carts + {a!r} * g.cart0) / (clicks + {a!r}) AS cart_rate,
               (purchases + {a!r} * g.buy0) / (clicks + {a!r}) AS purchase_rate
        FROM pairs_in, g ORDER BY query, product_id
        """
    ).to_arrow_table()


def _products(con: duckdb.DuckDBPyConnection, since: float, first: float, days: int, a: float) -> pa.Table:
    return con.sql(
        f"""
        WITH imp AS (SELECT product_id, count(*) FILTER (WHERE ts >= {since!r}) AS impressions
                     FROM shown WHERE ts >= {first!r} GROUP BY product_id),
        act AS (SELECT product_id,
                       sum(clicks) FILTER (WHERE ts >= {since!r}) AS clicks,
                       sum(carts) FILTER (WHERE ts >= {since!r}) AS carts,
                       sum(purchases) FILTER (WHERE ts >= {since!r}) AS purchases,
                       sum(clicks) AS clicks_all FROM acted WHERE ts >= {first!r} GROUP BY product_id),
        j AS (SELECT i.product_id, i.impressions, coalesce(x.clicks, 0) AS clicks,
                     coalesce(x.carts, 0) AS carts,
                     coalesce(x.purchases, 0) AS purchases, coalesce(x.clicks_all, 0) AS clicks_all
              FROM imp i LEFT JOIN act x USING (product_id)),
        g AS (SELECT sum(clicks)::DOUBLE / greatest(sum(impressions), 1) AS ctr0,
                     greatest(sum(clicks), 1)::DOUBLE AS total,
                     greatest(sum(clicks_all), 1)::DOUBLE AS total_all,
                     greatest(count(*), 1)::DOUBLE AS n FROM j)
        SELECT product_id, {days} AS window_days, impressions, clicks, carts, purchases,
               (clicks + {a!r} * g.ctr0) / (impressions + {a!r}) AS ctr,
               ((clicks + 1) / (g.total + g.n)) / ((clicks_all + 1) / (g.total_all + g.n)) AS trending
        FROM j, g WHERE impressions > 0 ORDER BY product_id
        """
    ).to_arrow_table()


def click_table(con: duckdb.DuckDBPyConnection, since: float) -> pa.Table:
    """Per (query, product, position, variant) since ``since``: ``impressions, clicks`` (the learners'
    input); ``variant`` is the answers' experiment arms (the log's tags, "" outside experiments)."""
    return con.sql(
        f"""
        SELECT s.query, s.product_id, s.position, s.variant, count(*) AS impressions,
               coalesce(sum(x.clicks), 0) AS clicks
        FROM shown s LEFT JOIN acted x USING (token, product_id)
        WHERE s.ts >= {since!r} AND s.query <> ''
        GROUP BY s.query, s.product_id, s.position, s.variant
        ORDER BY s.query, s.position, s.product_id, s.variant
        """
    ).to_arrow_table()


def propensities_of(clicks: pa.Table) -> Propensities | None:
    """:func:`~aisle.behaviour.propensity.estimate_propensities` over a :func:`click_table`, each row's
    ranking its experiment arms (``variant``)."""
    if clicks.num_rows == 0:
        return None
    keys = [
        f"{q}\x1f{p}"
        for q, p in zip(clicks["query"].to_pylist(), clicks["product_id"].to_pylist(), strict=True)
    ]
    index: dict[str, int] = {}
    pair = [index.setdefault(k, len(index)) for k in keys]
    arms: dict[str, int] = {}
    ranking = [arms.setdefault(v, len(arms)) for v in clicks["variant"].to_pylist()]
    return estimate_propensities(
        pair,  # type: ignore[arg-type]
        clicks["position"].to_numpy(),
        clicks["impressions"].to_numpy(),
        clicks["clicks"].to_numpy(),
        ranking=np.asarray(ranking, dtype=np.int64),
    )


def compute(
    answer_files: list[str], outcome_files: list[str], now: float, windows: Sequence[int] = WINDOWS
) -> tuple[dict[str, pa.Table], Propensities | None]:
    """Every behaviour table (see module docstring) and the propensities they were corrected with.

    ``answer_files``, ``outcome_files``: the log's Parquet files covering ``max(windows)`` days before
    ``now`` (Unix seconds). The ``clicks`` table (:func:`click_table`) covers the longest window.
    """
    con = duckdb.connect()
    try:
        log_view(con, "answers_log", answer_files, ANSWER_SCHEMA)
        log_view(con, "outcomes_log", outcome_files, OUTCOME_SCHEMA)
        first = now - max(windows) * DAY_S
        _events(con, first, now)
        clicks = click_table(con, first)
        propensities = propensities_of(clicks)
        _propensity_table(con, propensities)
        tables = _windowed(con, now, windows)
        tables["clicks"] = clicks
        return tables, propensities
    finally:
        con.close()
