"""Attribution: which answer each shopper event counts for, computed with DuckDB over the Parquet log.

Rules (Google Cloud Retail's attribution, Algolia Insights' events):

- an event that carries an attribution token counts for the answer with that token, when it happens
  within :data:`CREDIT_S` (a day) after it; a click's position is the one it gives, else the
  product's place in that answer;
- a conversion (:data:`~aisle.analytics.records.CONVERSION_TYPES`) without a token counts for the
  latest answer to the same visitor that showed the product, at most ``window_s`` seconds (default an
  hour) before it;
- other events without a token, and views, count for nothing;
- an event id seen twice counts once (the log is written at least once).

:func:`attribute` makes, in a DuckDB connection, the table ``per_answer``: one row per answer of a
span of time, with what was credited to it. Its columns (:data:`PER_ANSWER_COLUMNS`): the answer's
``token, kind, ts, visitor_id, query, total, rules, container_id, models, variant, follow_up,
follow_ups_answered``, ``shown``
(products shown), and ``clicks, conversions, revenue`` (price x quantity, quantity 1 when absent) and
``click_positions`` (a list); and ``sequence_end``, ``sequence``: the answer's search sequence (a query
typed letter by letter is one search, :mod:`aisle.analytics.search_sequences`). The reports read only
this table, so a day's rows can be kept as a roll-up
(:mod:`aisle.analytics.rollups`) and read again instead of attributing the day anew.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from aisle.analytics.records import ANSWER_SCHEMA, CONVERSION_TYPES, LATE_ANSWER_COLUMNS, OUTCOME_SCHEMA
from aisle.analytics.search_sequences import SEQUENCE_COLUMNS, fold_sequences
from aisle.core.events import EventName

DEFAULT_WINDOW_S = 3600.0
"""Seconds after an answer in which a conversion without a token may still be credited to it."""
CREDIT_S = 86400.0
"""Seconds after an answer in which an event carrying its token is credited to it."""
PER_ANSWER_COLUMNS = (
    "token", "kind", "ts", "visitor_id", "query", "total", "rules", "container_id", "models", "variant",
    "follow_up", "follow_ups_answered", "shown", "clicks", "conversions", "revenue", "click_positions",
    *SEQUENCE_COLUMNS,
)  # fmt: skip


def log_view(
    con: duckdb.DuckDBPyConnection,
    name: str,
    files: list[str],
    schema: pa.Schema,
    late: dict[str, str] | None = None,
) -> None:
    """A DuckDB view ``name`` over the log's Parquet ``files`` (or an empty table of ``schema`` when there
    are none), as attribution and the behaviour tables (:mod:`aisle.behaviour.tables`) read the log.
    ``late``: columns older files lack, with the value their rows take (files of both ages may be mixed)."""
    if files:
        listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        raw = f"read_parquet([{listed}], union_by_name = true)"
        have = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {raw}").fetchall()}
        late = late or {}
        present = [c for c in late if c in have]
        star = f"* EXCLUDE ({', '.join(present)})" if present else "*"
        filled = [f"coalesce({c}, {v}) AS {c}" if c in have else f"{v} AS {c}" for c, v in late.items()]
        select = ", ".join([star, *filled])
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {select} FROM {raw}")
    else:
        con.register(f"{name}_empty", schema.empty_table())
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM {name}_empty")


def attribute(
    con: duckdb.DuckDBPyConnection,
    answer_files: list[str],
    outcome_files: list[str],
    lo: float,
    hi: float,
    *,
    window_s: float = DEFAULT_WINDOW_S,
    table: str = "per_answer",
) -> None:
    """Create the TEMP table ``table`` of the answers with ``lo <= ts < hi`` (Unix seconds, UTC).

    ``answer_files`` and ``outcome_files`` must hold every answer and event up to ``hi + CREDIT_S``
    (events after an answer count for it; a later answer may be "the latest" one for a conversion
    without a token, and then that conversion counts for no answer of the span).
    """
    log_view(con, "answers_log", answer_files, ANSWER_SCHEMA, LATE_ANSWER_COLUMNS)
    log_view(con, "outcomes_log", outcome_files, OUTCOME_SCHEMA)
    conversions = ", ".join(f"'{t}'" for t in sorted(CONVERSION_TYPES))
    reach = hi + CREDIT_S
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE span_answers AS
          SELECT token, kind, ts, visitor_id, query, total, rules, container_id, models, variant,
                 follow_up, follow_ups_answered, product_ids
          FROM answers_log WHERE ts >= {lo!r} AND ts < {hi!r};
        CREATE OR REPLACE TEMP TABLE span_outcomes AS
          SELECT event_id, min(ts) AS ts, any_value(event_type) AS event_type,
                 any_value(visitor_id) AS visitor_id, any_value(product_id) AS product_id,
                 max(attribution_token) AS attribution_token, max(position) AS position,
                 any_value(coalesce(price, 0) * coalesce(quantity, 1)) AS value
          FROM outcomes_log
          WHERE ts >= {lo!r} AND ts < {reach!r} AND event_type IN ('{EventName.CLICK}', {conversions})
          GROUP BY event_id;
        CREATE OR REPLACE TEMP TABLE span_credited AS
          SELECT a.token, o.event_type,
                 coalesce(o.position, list_position(a.product_ids, o.product_id)) AS position,
                 CASE WHEN o.event_type IN ({conversions}) THEN o.value ELSE 0 END AS revenue
          FROM span_outcomes o JOIN span_answers a ON o.attribution_token = a.token
          WHERE o.ts < a.ts + {CREDIT_S!r}
          UNION ALL
          SELECT arg_max(a.token, a.ts), any_value(o.event_type), NULL, any_value(o.value)
          FROM span_outcomes o
          JOIN (SELECT token, ts, visitor_id, product_ids FROM answers_log
                WHERE ts >= {lo!r} AND ts < {reach!r} AND visitor_id IS NOT NULL) a
            ON a.visitor_id = o.visitor_id AND a.ts <= o.ts AND a.ts >= o.ts - {window_s!r}
           AND list_contains(a.product_ids, o.product_id)
          WHERE o.attribution_token IS NULL AND o.event_type IN ({conversions})
          GROUP BY o.event_id;
        CREATE OR REPLACE TEMP TABLE {table} AS
          SELECT a.token, a.kind, a.ts, a.visitor_id, a.query, a.total, a.rules, a.container_id,
                 a.models, a.variant, a.follow_up, a.follow_ups_answered, len(a.product_ids) AS shown,
                 count(c.token) FILTER (WHERE c.event_type = '{EventName.CLICK}') AS clicks,
                 count(c.token) FILTER (WHERE c.event_type IN ({conversions})) AS conversions,
                 coalesce(sum(c.revenue), 0)::DOUBLE AS revenue,
                 coalesce(list(c.position)
                            FILTER (WHERE c.event_type = '{EventName.CLICK}' AND c.position IS NOT NULL),
                          []) AS click_positions
          FROM span_answers a LEFT JOIN span_credited c ON c.token = a.token
          GROUP BY a.token, a.kind, a.ts, a.visitor_id, a.query, a.total, a.rules, a.container_id,
                   a.models, a.variant, a.follow_up, a.follow_ups_answered, shown;
        DROP TABLE span_answers; DROP TABLE span_outcomes; DROP TABLE span_credited;
        """
    )
    fold_sequences(con, table)
