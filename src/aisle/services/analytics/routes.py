"""HTTP routes of the analytics service: one report each, JSON or CSV (``format=csv``).

Every report takes ``tenant``, ``from`` and ``to`` (ISO-8601, UTC when no offset is given; a date alone
is the start of that day for ``from`` and the end of that day for ``to``; defaults: the 28 days up to
now). Reports run DuckDB over Parquet files, so they are plain ``def`` routes (the thread pool).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic import BaseModel

from aisle.analytics.engine import simulated_span
from aisle.core.auth.scopes import ANALYTICS_READ
from aisle.core.errors import BadRequest, ErrorCode, TenantNotFound
from aisle.services.analytics.schemas import (
    Containers,
    Daily,
    FollowUps,
    Models,
    Positions,
    Queries,
    QueryCounts,
    Report,
    Rules,
    Simulated,
    SimulatedSource,
    Summary,
)
from aisle.services.analytics.state import State
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TenantQuery

router = APIRouter(prefix="/analytics", tags=["analytics"])
read = scoped(ANALYTICS_READ)
MAX_DAYS = 731
DEFAULT_DAYS = 28
INSTANT = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$"
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
CSV = {"content": {"text/csv": {"schema": {"type": "string"}}}, "description": "With format=csv."}
Format = Annotated[Literal["json", "csv"], Query(description="json (default) or csv: one row per item.")]
Limit = Annotated[int, Query(ge=1, le=1000, description="At most this many rows.")]
BAD_REQUEST = (
    f"`{ErrorCode.PERIOD_INVALID}`: `from` or `to` is not a date or time, `from` is not before `to` (a "
    f"period is never turned around nor shortened to a day), or the period spans over {MAX_DAYS} days. "
    f"`{ErrorCode.UNKNOWN_PARAMETER}`: a query parameter the report does not take."
)
"""The 400s every report may answer, in its OpenAPI description."""


@dataclass(frozen=True)
class Period:
    """``[start, end)`` as Unix seconds and as the ISO-8601 instants the answer repeats."""

    start: float
    end: float

    def iso(self) -> tuple[str, str]:
        return tuple(  # type: ignore[return-value]
            datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z") for t in (self.start, self.end)
        )


def _instant(raw: str, name: str, *, end: bool) -> datetime:
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(
            f"'{name}' is not a valid ISO-8601 date or time: {raw!r}", code=ErrorCode.PERIOD_INVALID
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if end and _DATE_ONLY.match(raw):
        parsed += timedelta(days=1)  # a date alone as `to` includes that day
    return parsed


def period(
    from_: Annotated[
        str | None,
        Query(alias="from", pattern=INSTANT, description="Start, ISO-8601 (a date: that day's start)."),
    ] = None,
    to: Annotated[
        str | None,
        Query(pattern=INSTANT, description="End, ISO-8601 (a date: that day's end). Default: now."),
    ] = None,
) -> Period:
    """The period asked for. Raises BadRequest ``period_invalid``: not a date, ``from`` not before
    ``to``, or longer than :data:`MAX_DAYS` days."""
    end = _instant(to, "to", end=True) if to is not None else datetime.now(UTC)
    start = _instant(from_, "from", end=False) if from_ is not None else end - timedelta(days=DEFAULT_DAYS)
    if start >= end:
        raise BadRequest(
            f"'from' ({from_ or start.isoformat()}) must be before 'to' ({to or 'now'})",
            code=ErrorCode.PERIOD_INVALID,
        )
    if end - start > timedelta(days=MAX_DAYS):
        raise BadRequest(f"a period spans at most {MAX_DAYS} days", code=ErrorCode.PERIOD_INVALID)
    return Period(start.timestamp(), end.timestamp())


PeriodQuery = Annotated[Period, Depends(period)]


def _checked(state: Any, tenant: str) -> None:
    if not state.tenants.exists(tenant):
        raise TenantNotFound(tenant)


def _frame(state: Any, tenant: str, when: Period) -> dict[str, Any]:
    start, end = when.iso()
    sources = state.engine.simulated_sources(tenant)
    found = simulated_span(sources)
    simulated = Simulated.model_validate(found.to_json()) if found is not None else None
    listed = [SimulatedSource.model_validate(p.to_json()) for p in sources]
    return {"tenant": tenant, "from": start, "to": end, "simulated": simulated, "simulatedSources": listed}


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A cell a spreadsheet would run as a formula (OWASP, "CSV injection"): shoppers type the queries."""


def _cell(value: Any) -> Any:
    """A text cell that a spreadsheet would take for a formula, quoted with a leading apostrophe."""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_START) else value


def _csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> Response:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8")


def _answer(model: type[Report], frame: dict[str, Any], rows: list[dict[str, Any]], fmt: str) -> Any:
    if fmt == "csv":
        item = model.model_fields["items"].annotation.__args__[0]  # type: ignore[union-attr]
        return _csv(rows, list(item.model_fields))
    return model.model_validate({**frame, "items": rows})


def _responses() -> dict[int | str, dict[str, Any]]:
    responses = {**error_responses(400, 401, 403, 404, 422), 200: CSV}
    responses[400] = {**responses[400], "description": BAD_REQUEST}
    return responses


def _route(path: str, model: type[BaseModel], summary: str) -> Any:
    return router.get(
        path,
        response_model=model,
        response_model_by_alias=True,
        dependencies=[read],
        responses=_responses(),
        summary=summary,
    )


@_route("/summary", Summary, "Searches, visitors, no-result rate, CTR, conversion, revenue")
def summary(state: State, tenant: TenantQuery, when: PeriodQuery, format: Format = "json") -> Any:
    """Figures of the search answers of the period (recommendations: ``GET /analytics/recommendations``)."""
    _checked(state, tenant)
    figures = state.engine.report("summary", tenant, when.start, when.end)
    if format == "csv":
        return _csv([figures], list(figures))
    return Summary.model_validate({**_frame(state, tenant, when), **figures})


@_route("/daily", Daily, "Search figures per UTC day")
def daily(state: State, tenant: TenantQuery, when: PeriodQuery, format: Format = "json") -> Any:
    """Searches, no-result rate, CTR, conversion rate and revenue per day (days without searches left
    out); ``partial`` marks a day cut short (today, not over yet, or a day the period cuts), whose
    figures a chart should leave out or mark rather than draw as a drop."""
    _checked(state, tenant)
    return _answer(
        Daily, _frame(state, tenant, when), state.engine.report("daily", tenant, when.start, when.end), format
    )


@_route("/searches", Queries, "Figures per normalised query")
def searches(
    state: State,
    tenant: TenantQuery,
    when: PeriodQuery,
    sort: Annotated[
        Literal["searches", "noResultSearches", "clicks", "clickThroughRate", "conversions", "revenue"],
        Query(description="Descending by this figure, then by query."),
    ] = "searches",
    limit: Limit = 100,
    format: Format = "json",
) -> Any:
    """Per normalised query: searches, no-result searches, clicks, CTR, conversions, revenue."""
    _checked(state, tenant)
    rows = state.engine.report("searches", tenant, when.start, when.end, sort=sort, limit=limit)
    return _answer(Queries, _frame(state, tenant, when), rows, format)


@_route("/searches/no-results", QueryCounts, "Queries that found nothing")
def no_results(
    state: State, tenant: TenantQuery, when: PeriodQuery, limit: Limit = 100, format: Format = "json"
) -> Any:
    """Queries with searches whose total was 0, and how many such searches, most first."""
    _checked(state, tenant)
    rows = state.engine.report("no_result_queries", tenant, when.start, when.end, limit=limit)
    return _answer(QueryCounts, _frame(state, tenant, when), rows, format)


@_route("/searches/no-clicks", QueryCounts, "Queries whose results nobody clicked")
def no_clicks(
    state: State, tenant: TenantQuery, when: PeriodQuery, limit: Limit = 100, format: Format = "json"
) -> Any:
    """Queries whose searches all found products and none of which was clicked, most searched first."""
    _checked(state, tenant)
    rows = state.engine.report("no_click_queries", tenant, when.start, when.end, limit=limit)
    return _answer(QueryCounts, _frame(state, tenant, when), rows, format)


@_route("/searches/follow-ups", FollowUps, "Guided search: questions asked and answered per query")
def follow_ups(
    state: State, tenant: TenantQuery, when: PeriodQuery, limit: Limit = 100, format: Format = "json"
) -> Any:
    """Per normalised query: searches, follow-up questions asked, searches that answered one, and the
    attribute asked about most; the queries asked most first (never asked nor answered: left out)."""
    _checked(state, tenant)
    rows = state.engine.report("follow_ups", tenant, when.start, when.end, limit=limit)
    return _answer(FollowUps, _frame(state, tenant, when), rows, format)


@_route("/positions", Positions, "Clicks and click-through rate by position")
def positions(
    state: State,
    tenant: TenantQuery,
    when: PeriodQuery,
    depth: Annotated[int, Query(ge=1, le=100, description="Positions 1..depth.")] = 20,
    format: Format = "json",
) -> Any:
    """Per position of search results: clicks, and clicks / searches that showed a product there."""
    _checked(state, tenant)
    rows = state.engine.report("positions", tenant, when.start, when.end, depth=depth)
    return _answer(Positions, _frame(state, tenant, when), rows, format)


@_route("/recommendations", Containers, "Figures per recommendation container")
def recommendations(state: State, tenant: TenantQuery, when: PeriodQuery, format: Format = "json") -> Any:
    """Per container: answers, clicks, CTR, conversions, revenue."""
    _checked(state, tenant)
    rows = state.engine.report("recommendations", tenant, when.start, when.end)
    return _answer(Containers, _frame(state, tenant, when), rows, format)


@_route("/models", Models, "Figures per recommendation model")
def models(state: State, tenant: TenantQuery, when: PeriodQuery, format: Format = "json") -> Any:
    """Per model: the recommendation answers it served a slot of, their clicks, CTR, conversions, revenue."""
    _checked(state, tenant)
    rows = state.engine.report("models", tenant, when.start, when.end)
    return _answer(Models, _frame(state, tenant, when), rows, format)


@_route("/rules", Rules, "Figures per merchandising rule")
def rules(state: State, tenant: TenantQuery, when: PeriodQuery, format: Format = "json") -> Any:
    """Per rule: the searches it fired on, their CTR and conversions."""
    _checked(state, tenant)
    rows = state.engine.report("rules", tenant, when.start, when.end)
    return _answer(Rules, _frame(state, tenant, when), rows, format)
