"""The analytics reports, each one DuckDB query over the attributed views of one tenant and period.

Definitions (as Algolia Analytics and Google Cloud Retail define them, per answer):

- click-through rate: answers with at least one credited click / answers;
- conversion rate: answers with at least one credited conversion / answers;
- revenue: the credited conversions' price x quantity;
- average click position: the mean 1-based position of credited clicks;
- a no-result search: a search answer whose ``total`` is 0; a no-click query: a query whose searches
  all had results and none had a click;
- guided search: a search *asked* when its answer carried a follow-up question, *answered one* when
  the request's filters answered at least one (a filter on an askable attribute: the filters are the
  conversation's state, so a facet picked by hand on such an attribute counts too).

A *search* is a search sequence (:mod:`aisle.analytics.search_sequences`): the answers to a query typed
letter by letter ("n", "ni", "nik", "nike" within seconds) are one search of the last query, in every
figure below. A search with an empty query (a page load, a browse) is no query: the summary counts it
on its own line (``emptyQuerySearches``) and every other search figure leaves it out; the rules report
counts every search a rule fired on, empty ones too.

Every report takes the tenant and a period ``[start, end)`` in Unix seconds (UTC); rates are ``None``
when there is nothing to divide by.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from typing import Any, Literal

import duckdb

from aisle.analytics.attribution import CREDIT_S, DEFAULT_WINDOW_S, attribute
from aisle.analytics.log import ParquetLog, day_of
from aisle.analytics.rollups import Rollups, day_start
from aisle.analytics.search_sequences import create_search_views

QuerySort = Literal["searches", "noResultSearches", "clicks", "clickThroughRate", "conversions", "revenue"]
_QUERY_SORT = {
    "searches": "searches",
    "noResultSearches": "no_result_searches",
    "clicks": "clicks",
    "clickThroughRate": "click_through_rate",
    "conversions": "conversions",
    "revenue": "revenue",
}


def _rate(num: str, den: str) -> str:
    return f"CASE WHEN {den} = 0 THEN NULL ELSE ({num})::DOUBLE / {den} END"


class AnalyticsReports:
    """Summary, per-query, per-position, per-container and per-rule figures of one tenant.

    Closed days are read from their roll-ups (:class:`~aisle.analytics.rollups.Rollups`, computed
    once), the rest of the period is attributed live from the log.

    Args:
        log: the Parquet log (files fetched from the bucket into its cache when it is remote).
        window_s: attribution window of conversions without a token, seconds (default one hour).
        clock: the current Unix time, which says which days are closed and which day is not over yet
            (tests pass a fixed one).
    """

    def __init__(
        self, log: ParquetLog, *, window_s: float = DEFAULT_WINDOW_S, clock: Callable[[], float] = time.time
    ) -> None:
        self.log = log
        self.window_s = window_s
        self._now = clock
        self.rollups = Rollups(log, window_s=window_s, clock=clock)

    @contextmanager
    def _views(self, tenant: str, start: float, end: float) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection whose view ``per_answer`` holds every answer with ``start <= ts < end``, and
        ``all_searches`` and ``searches`` the search sequences among them (all, those with a query)."""
        con = duckdb.connect()
        try:
            first, last = day_of(start), day_of(max(start, end - 1e-6))
            days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
            rolled = [self.rollups.file(tenant, d) for d in days if self.rollups.closed(d)]
            open_days = [d for d in days if not self.rollups.closed(d)]
            parts = []
            if rolled:
                listed = ", ".join("'" + f.replace("'", "''") + "'" for f in rolled)
                parts.append(f"SELECT * FROM read_parquet([{listed}])")
            if open_days:
                lo = max(start, day_start(open_days[0]))
                reach = day_of(end + CREDIT_S)
                attribute(
                    con,
                    self.log.files(tenant, "answers", open_days[0], reach),
                    self.log.files(tenant, "outcomes", open_days[0], reach),
                    lo,
                    end,
                    window_s=self.window_s,
                    table="live_answers",
                )
                parts.append("SELECT * FROM live_answers")
            if not parts:  # pragma: no cover - a period has at least one day
                raise ValueError("empty period")
            union = " UNION ALL BY NAME ".join(parts)
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW per_answer AS SELECT * FROM ({union}) "
                f"WHERE ts >= {start!r} AND ts < {end!r}"
            )
            create_search_views(con)
            yield con
        finally:
            con.close()

    @staticmethod
    def _rows(
        con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None
    ) -> list[dict[str, Any]]:
        cur = con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def summary(self, tenant: str, start: float, end: float) -> dict[str, Any]:
        """Searches with a query: ``searches``, ``visitors``, ``noResultSearches``, ``noResultRate``,
        ``clickThroughRate``, ``conversionRate``, ``revenue``, ``averageClickPosition``; and
        ``emptyQuerySearches``, the searches without one (page loads, browsing), counted apart."""
        n = "count(*) FILTER (WHERE query <> '')"

        def share(condition: str) -> str:
            return _rate(f"count(*) FILTER (WHERE query <> '' AND {condition})", n)

        with self._views(tenant, start, end) as con:
            return self._rows(
                con,
                f"""
                SELECT {n} AS searches,
                       count(DISTINCT visitor_id) FILTER (WHERE query <> '') AS visitors,
                       count(*) FILTER (WHERE query <> '' AND total = 0) AS noResultSearches,
                       {share("total = 0")} AS noResultRate,
                       {share("clicks > 0")} AS clickThroughRate,
                       {share("conversions > 0")} AS conversionRate,
                       coalesce(sum(revenue) FILTER (WHERE query <> ''), 0)::DOUBLE AS revenue,
                       (sum(list_sum(click_positions)) FILTER (WHERE query <> ''))::DOUBLE
                         / nullif(sum(len(click_positions)) FILTER (WHERE query <> ''), 0)
                         AS averageClickPosition,
                       count(*) FILTER (WHERE query = '') AS emptyQuerySearches
                FROM all_searches
                """,
            )[0]

    def experiment_visitors(
        self, tenant: str, start: float, end: float, experiment_id: str, kind: str = "search"
    ) -> list[tuple[str, str, int, int, int, float]]:
        """One row per visitor of an experiment's answers of ``kind``: ``(variant id, visitor id,
        answers, answers with a click, conversions, revenue)`` (answers tagged ``experimentId:variant``
        in the log's ``variant`` column; answers without a visitor are left out). Searches are counted as
        the other reports count them: a query typed letter by letter is one search of the last, with
        the clicks and purchases of all its answers (:mod:`aisle.analytics.search_sequences`)."""
        prefix = f"{experiment_id}:"
        source = "all_searches" if kind == "search" else "per_answer"
        with self._views(tenant, start, end) as con:
            return con.execute(
                f"""
                SELECT substr(tag, ?) AS variant, visitor_id, count(*) AS answers,
                       count(*) FILTER (WHERE clicks > 0) AS clicked,
                       sum(conversions)::BIGINT AS conversions, sum(revenue)::DOUBLE AS revenue
                FROM (SELECT unnest(string_split(variant, ',')) AS tag, visitor_id, clicks, conversions,
                             revenue
                      FROM {source} WHERE kind = ? AND visitor_id IS NOT NULL AND variant <> '')
                WHERE starts_with(tag, ?)
                GROUP BY variant, visitor_id ORDER BY variant, visitor_id
                """,
                [len(prefix) + 1, kind, prefix],
            ).fetchall()

    def daily(self, tenant: str, start: float, end: float) -> list[dict[str, Any]]:
        """Per UTC day of searches with a query: ``day``, ``searches``, ``noResultRate``,
        ``clickThroughRate``, ``conversionRate``, ``revenue``, and ``partial``: the day is cut short, not
        over yet (today) or only partly in the period, so its figures are not a whole day's (a chart
        leaves it out or says so). Days without searches are left out."""
        cut = min(end, self._now())
        with self._views(tenant, start, end) as con:
            rows = self._rows(
                con,
                f"""
                SELECT strftime(to_timestamp(ts) AT TIME ZONE 'UTC', '%Y-%m-%d') AS day,
                       count(*) AS searches,
                       {_rate("count(*) FILTER (WHERE total = 0)", "count(*)")} AS noResultRate,
                       {_rate("count(*) FILTER (WHERE clicks > 0)", "count(*)")} AS clickThroughRate,
                       {_rate("count(*) FILTER (WHERE conversions > 0)", "count(*)")} AS conversionRate,
                       coalesce(sum(revenue), 0)::DOUBLE AS revenue
                FROM searches GROUP BY day ORDER BY day
                """,
            )
        for row in rows:
            first = day_start(date.fromisoformat(row["day"]))
            row["partial"] = first < start or first + 86400 > cut
        return rows

    def searches(
        self, tenant: str, start: float, end: float, *, sort: QuerySort = "searches", limit: int = 100
    ) -> list[dict[str, Any]]:
        """Per normalised query: ``query``, ``searches``, ``noResultSearches``, ``clicks``,
        ``clickThroughRate``, ``conversions``, ``revenue``; the ``limit`` first by ``sort`` (descending,
        then by query)."""
        order = _QUERY_SORT[sort]
        with self._views(tenant, start, end) as con:
            rows = self._rows(
                con,
                f"""
                SELECT query, count(*) AS searches,
                       count(*) FILTER (WHERE total = 0) AS no_result_searches,
                       sum(clicks)::BIGINT AS clicks,
                       {_rate("count(*) FILTER (WHERE clicks > 0)", "count(*)")} AS click_through_rate,
                       sum(conversions)::BIGINT AS conversions,
                       coalesce(sum(revenue), 0)::DOUBLE AS revenue
                FROM searches GROUP BY query
                ORDER BY {order} DESC NULLS LAST, query LIMIT ?
                """,
                [limit],
            )
        return [
            {
                "query": r["query"],
                "searches": r["searches"],
                "noResultSearches": r["no_result_searches"],
                "clicks": r["clicks"],
                "clickThroughRate": r["click_through_rate"],
                "conversions": r["conversions"],
                "revenue": r["revenue"],
            }
            for r in rows
        ]

    def no_result_queries(
        self, tenant: str, start: float, end: float, *, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Queries with at least one search that found nothing: ``query``, ``searches`` (those that found
        nothing), most first."""
        with self._views(tenant, start, end) as con:
            return self._rows(
                con,
                """
                SELECT query, count(*) AS searches FROM searches
                WHERE total = 0 GROUP BY query ORDER BY searches DESC, query LIMIT ?
                """,
                [limit],
            )

    def no_click_queries(
        self, tenant: str, start: float, end: float, *, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Queries whose searches all found products and none was clicked: ``query``, ``searches``."""
        with self._views(tenant, start, end) as con:
            return self._rows(
                con,
                """
                SELECT query, count(*) AS searches FROM searches
                GROUP BY query HAVING min(total) > 0 AND sum(clicks) = 0
                ORDER BY searches DESC, query LIMIT ?
                """,
                [limit],
            )

    def follow_ups(self, tenant: str, start: float, end: float, *, limit: int = 100) -> list[dict[str, Any]]:
        """Guided search per normalised query (module docstring): ``query``, ``searches``, ``asked``
        (searches whose answer asked a question), ``askRate``, ``answered`` (searches that answered
        one), ``answerRate`` (answered / asked), ``attribute`` (the one asked most); the ``limit``
        queries asked most first, then by query; queries never asked nor answered are left out."""
        with self._views(tenant, start, end) as con:
            return self._rows(
                con,
                f"""
                SELECT query, count(*) AS searches,
                       count(*) FILTER (WHERE follow_up <> '') AS asked,
                       {_rate("count(*) FILTER (WHERE follow_up <> '')", "count(*)")} AS askRate,
                       count(*) FILTER (WHERE follow_ups_answered > 0) AS answered,
                       {
                    _rate(
                        "count(*) FILTER (WHERE follow_ups_answered > 0)",
                        "count(*) FILTER (WHERE follow_up <> '')",
                    )
                } AS answerRate,
                       coalesce(mode(follow_up) FILTER (WHERE follow_up <> ''), '') AS attribute
                FROM searches GROUP BY query
                HAVING count(*) FILTER (WHERE follow_up <> '' OR follow_ups_answered > 0) > 0
                ORDER BY asked DESC, query LIMIT ?
                """,
                [limit],
            )

    def positions(self, tenant: str, start: float, end: float, *, depth: int = 20) -> list[dict[str, Any]]:
        """Per position 1..``depth`` of searches with a query: ``position``, ``clicks``,
        ``clickThroughRate`` (clicks at the position / searches that showed a product there)."""
        with self._views(tenant, start, end) as con:
            return self._rows(
                con,
                f"""
                WITH s AS MATERIALIZED (SELECT token, shown, click_positions FROM searches),
                pos AS (SELECT range AS position FROM range(1, ? + 1)),
                shown AS (SELECT p.position, count(a.token) AS answers
                          FROM pos p LEFT JOIN s a ON a.shown >= p.position
                          GROUP BY p.position),
                clicked AS (SELECT position, count(*) AS clicks
                            FROM (SELECT unnest(click_positions) AS position FROM s) GROUP BY position)
                SELECT s.position, coalesce(c.clicks, 0) AS clicks,
                       {_rate("coalesce(c.clicks, 0)", "s.answers")} AS clickThroughRate
                FROM shown s LEFT JOIN clicked c ON c.position = s.position ORDER BY s.position
                """,
                [depth],
            )

    def _per_recommender(
        self, tenant: str, start: float, end: float, key: str, label: str
    ) -> list[dict[str, Any]]:
        """Recommendation answers grouped by ``key`` (a column, or ``unnest(models)``), as ``label``."""
        with self._views(tenant, start, end) as con:
            return self._rows(
                con,
                f"""
                WITH grouped AS (SELECT {key} AS name, clicks, conversions, revenue
                                 FROM per_answer WHERE kind = 'recommendations')
                SELECT name AS {label}, count(*) AS answers, sum(clicks)::BIGINT AS clicks,
                       {_rate("count(*) FILTER (WHERE clicks > 0)", "count(*)")} AS clickThroughRate,
                       sum(conversions)::BIGINT AS conversions,
                       coalesce(sum(revenue), 0)::DOUBLE AS revenue
                FROM grouped GROUP BY name ORDER BY answers DESC, name
                """,
            )

    def recommendations(self, tenant: str, start: float, end: float) -> list[dict[str, Any]]:
        """Per container: ``containerId``, ``answers``, ``clicks``, ``clickThroughRate``, ``conversions``,
        ``revenue``; most answers first."""
        return self._per_recommender(tenant, start, end, "container_id", "containerId")

    def models(self, tenant: str, start: float, end: float) -> list[dict[str, Any]]:
        """Per recommendation model: ``modelId``, ``answers`` it served a slot of, ``clicks``,
        ``clickThroughRate``, ``conversions``, ``revenue``; most answers first."""
        return self._per_recommender(tenant, start, end, "unnest(models)", "modelId")

    def rules(self, tenant: str, start: float, end: float) -> list[dict[str, Any]]:
        """Per merchandising rule: ``ruleId``, ``searches`` it fired on, their ``clickThroughRate`` and
        ``conversions``; most searches first."""
        with self._views(tenant, start, end) as con:
            return self._rows(
                con,
                f"""
                WITH fired AS (SELECT unnest(rules) AS rule_id, clicks, conversions FROM all_searches)
                SELECT rule_id AS ruleId, count(*) AS searches,
                       {_rate("count(*) FILTER (WHERE clicks > 0)", "count(*)")} AS clickThroughRate,
                       sum(conversions)::BIGINT AS conversions
                FROM fired GROUP BY rule_id ORDER BY searches DESC, ruleId
                """,
            )
