"""Attribution: which answer each shopper event counts for, as DuckDB views over the Parquet log.

Rules (Google Cloud Retail's attribution, Algolia Insights' events):

- an event that carries an attribution token counts for the answer with that token (a click's
  position is the one it gives, else the product's place in that answer);
- a conversion (:data:`~aisle.analytics.records.CONVERSION_TYPES`) without a token counts for the
  latest answer to the same visitor that showed the product, at most ``window_s`` seconds before it;
- other events without a token count for nothing;
- an event id seen twice counts once (the first by time; the log is written at least once).

The views :func:`attributed_views` creates in a DuckDB connection:

``answers``  every answer of the period (the log's columns; ``ts`` is the Unix time in seconds).
``outcomes`` every event of the period and the window after it, duplicates removed.
``credited`` ``(event_id, event_type, token, position, revenue)``: each counted event and its answer.
``per_answer`` one row per answer of the period: its columns plus ``clicks``, ``conversions``,
           ``revenue`` (price x quantity, quantity 1 when absent), ``click_positions`` (a list).
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from aisle.analytics.log import ParquetLog, day_of
from aisle.analytics.records import ANSWER_SCHEMA, CONVERSION_TYPES, OUTCOME_SCHEMA

DEFAULT_WINDOW_S = 3600.0
"""Seconds after an answer in which a conversion without a token may still be credited to it."""


def _source(con: duckdb.DuckDBPyConnection, name: str, files: list[str], schema: pa.Schema) -> None:
    """A view ``name`` over ``files`` (or an empty table of ``schema`` when there are none)."""
    if files:
        listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM read_parquet([{listed}])")
    else:
        con.register(f"{name}_empty", schema.empty_table())
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM {name}_empty")


def attributed_views(
    con: duckdb.DuckDBPyConnection,
    log: ParquetLog,
    tenant: str,
    start: float,
    end: float,
    *,
    window_s: float = DEFAULT_WINDOW_S,
) -> None:
    """Create the views above for answers with ``start <= at < end`` (Unix seconds, UTC).

    Events up to ``end + window_s`` are read, so a conversion shortly after the period still counts
    for an answer within it; answers up to the same instant are read too, so "the latest answer" is
    the latest one, even when it falls after the period (then the event counts for no answer of it).
    """
    first, last = day_of(start), day_of(end + window_s)
    _source(con, "answers_log", log.files(tenant, "answers", first, last), ANSWER_SCHEMA)
    _source(con, "outcomes_log", log.files(tenant, "outcomes", first, last), OUTCOME_SCHEMA)
    conversions = ", ".join(f"'{t}'" for t in sorted(CONVERSION_TYPES))
    con.execute(
        f"""
        CREATE OR REPLACE TEMP VIEW answers_all AS
          SELECT * FROM answers_log WHERE ts >= {start!r} AND ts < {end + window_s!r};
        CREATE OR REPLACE TEMP VIEW answers AS SELECT * FROM answers_all WHERE ts < {end!r};
        CREATE OR REPLACE TEMP VIEW outcomes AS
          SELECT * FROM outcomes_log WHERE ts >= {start!r} AND ts < {end + window_s!r}
          QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY ts, attribution_token NULLS LAST) = 1;
        CREATE OR REPLACE TEMP VIEW credited AS
          SELECT o.event_id, o.event_type, a.token,
                 coalesce(o.position, list_position(a.product_ids, o.product_id)) AS position,
                 CASE WHEN o.event_type IN ({conversions})
                      THEN coalesce(o.price, 0) * coalesce(o.quantity, 1) ELSE 0 END AS revenue
          FROM outcomes o JOIN answers a ON o.attribution_token = a.token
          UNION ALL
          SELECT o.event_id, any_value(o.event_type), arg_max(a.token, a.ts), NULL,
                 any_value(coalesce(o.price, 0) * coalesce(o.quantity, 1))
          FROM outcomes o JOIN answers_all a
            ON a.visitor_id = o.visitor_id AND a.ts <= o.ts AND a.ts >= o.ts - {window_s!r}
           AND list_contains(a.product_ids, o.product_id)
          WHERE o.attribution_token IS NULL AND o.event_type IN ({conversions})
          GROUP BY o.event_id;
        CREATE OR REPLACE TEMP VIEW credit_per_token AS
          SELECT token,
                 count(*) FILTER (WHERE event_type = 'click') AS clicks,
                 count(*) FILTER (WHERE event_type IN ({conversions})) AS conversions,
                 sum(revenue) AS revenue,
                 list(position) FILTER (WHERE event_type = 'click' AND position IS NOT NULL)
                   AS click_positions
          FROM credited GROUP BY token;
        CREATE OR REPLACE TEMP VIEW per_answer AS
          SELECT a.*, coalesce(c.clicks, 0) AS clicks, coalesce(c.conversions, 0) AS conversions,
                 coalesce(c.revenue, 0) AS revenue, coalesce(c.click_positions, []) AS click_positions
          FROM answers a LEFT JOIN credit_per_token c ON c.token = a.token;
        """
    )
