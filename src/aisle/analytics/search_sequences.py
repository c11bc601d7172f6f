"""Searches as a shopper makes them: the answers of one query typed letter by letter count as one search.

A search-as-you-type box asks for an answer at every keystroke: "n", "ni", "nik", "nike" are four
answers but one search of "nike". As Algolia's analytics do, a search answer is folded into the next
search answer when

- both answered the same visitor (answers without a visitor are never folded),
- its query is not empty and is a prefix of the next one's (a repeat of the same query counts as a
  prefix: paging, or a facet picked at once, is the same search), and
- the next one came at most :data:`TYPING_PAUSE_S` seconds after it.

A run of answers folded so is one *search sequence*, reported as its last answer (its query, total,
rules, follow-up question, products shown) with the clicks, conversions, revenue and click positions of
every answer of the run (a click on "nik"'s results before "nike" was typed still counts, once). "nikr"
then "nik" (a letter taken back) is no prefix run: two searches.

The fold is computed with the attribution (:func:`fold_sequences`, called by
:func:`~aisle.analytics.attribution.attribute`), so a closed day's roll-up holds it and a report reads it
as a filter, not a sort of the period's answers by visitor (that sort cost ~1.7 s per 800k searches).
A run is folded within the span attributed together: one that goes on over midnight (UTC) counts once
on each day. :func:`create_search_views` then gives the reports:

- ``all_searches``: one row per search sequence, with ``per_answer``'s columns (empty queries too);
- ``searches``: those with a query. An empty query is a page load or a browse, reported on its own
  line (the summary's ``emptyQuerySearches``), never as a query among the others.
"""

from __future__ import annotations

import duckdb

TYPING_PAUSE_S = 5.0
"""Seconds between two search answers to one visitor within which a query extended (or repeated)
continues the same search. A shopper's pause between keystrokes stays well under it; a new search after
reading the results comes later."""

SEQUENCE_COLUMNS = ("sequence_end", "sequence")
"""Columns :func:`fold_sequences` adds: ``sequence_end`` (the answer counts as a search: the last of its
run, or alone) and ``sequence`` (the run's ``clicks``, ``conversions``, ``revenue``,
``click_positions``)."""


def fold_sequences(con: duckdb.DuckDBPyConnection, table: str, pause_s: float = TYPING_PAUSE_S) -> None:
    """Add :data:`SEQUENCE_COLUMNS` to the attributed TEMP table ``table`` (one row per answer, with
    ``token, kind, ts, visitor_id, query, clicks, conversions, revenue, click_positions``). Answers of
    other kinds than ``search`` are each alone.

    The runs are found on the few columns they need (a sort of the wide rows cost four times as much),
    then joined back: most answers are alone, and only the runs' rows are summed."""
    visit = "(PARTITION BY visitor_id ORDER BY ts, token)"
    own = "{'clicks': a.clicks, 'conversions': a.conversions, 'revenue': a.revenue, "
    own += "'click_positions': a.click_positions}"
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE sequence_runs AS
        WITH marked AS (
          SELECT token, visitor_id, ts,
                 coalesce(lag(query) OVER visit <> '' AND starts_with(query, lag(query) OVER visit)
                          AND ts - lag(ts) OVER visit <= {pause_s!r}, false) AS continues,
                 coalesce(query <> '' AND starts_with(lead(query) OVER visit, query)
                          AND lead(ts) OVER visit - ts <= {pause_s!r}, false) AS continued
          FROM {table} WHERE kind = 'search' AND visitor_id IS NOT NULL
          WINDOW visit AS {visit}),
        runs AS (
          SELECT *, sum(CASE WHEN continues THEN 0 ELSE 1 END) OVER (
                      PARTITION BY visitor_id ORDER BY ts, token ROWS UNBOUNDED PRECEDING) AS run
          FROM marked WHERE continues OR continued)
        SELECT token, last_value(token) OVER (
                 PARTITION BY visitor_id, run ORDER BY ts, token
                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS head
        FROM runs;
        CREATE OR REPLACE TEMP TABLE {table} AS
          SELECT a.*, r.token IS NULL OR r.head = a.token AS sequence_end,
                 CASE WHEN t.head IS NULL THEN {own}
                      ELSE {{'clicks': t.clicks, 'conversions': t.conversions, 'revenue': t.revenue,
                             'click_positions': t.click_positions}} END AS sequence
          FROM {table} a
          LEFT JOIN sequence_runs r ON r.token = a.token
          LEFT JOIN (SELECT r.head, sum(a.clicks)::BIGINT AS clicks,
                            sum(a.conversions)::BIGINT AS conversions, sum(a.revenue)::DOUBLE AS revenue,
                            flatten(list(a.click_positions)) AS click_positions
                     FROM {table} a JOIN sequence_runs r ON r.token = a.token GROUP BY r.head) t
            ON t.head = a.token;
        DROP TABLE sequence_runs;
        """
    )


def create_search_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create the TEMP views ``all_searches`` and ``searches`` over ``per_answer`` (module docstring)."""
    con.execute(
        """
        CREATE OR REPLACE TEMP VIEW all_searches AS
          SELECT * EXCLUDE (sequence_end, sequence)
                   REPLACE (sequence.clicks AS clicks, sequence.conversions AS conversions,
                            sequence.revenue AS revenue, sequence.click_positions AS click_positions)
          FROM per_answer WHERE kind = 'search' AND sequence_end;
        CREATE OR REPLACE TEMP VIEW searches AS SELECT * FROM all_searches WHERE query <> '';
        """
    )
