"""The console's Analytics section: what the tenant's answers earned, from the analytics service.

One page per tenant and period (``from``/``to`` dates, default the last 28 days): summary cards (each
with its definition and its change against the previous period of the same length; figures in the
tenant's locale and currency, :mod:`~aisle.services.rules.console.figures`), the daily series and
clicks by position as charts (Chart.js, served from ``static/``; a day not over yet is left out of
them unless asked for), top queries, no-result and no-click queries (each with a link that opens a
new rule for it), guided search's questions asked and answered per query, containers and rules by
effect, and CSV exports. Every figure comes from ``GET /analytics/...`` with the session's token (scope
``analytics:read``); when the log holds the demo's simulated traffic, the page says so.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from aisle.core.errors import AisleError
from aisle.services.rules.console.figures import Change, Figures, Kind
from aisle.services.rules.console.frame import api, page
from aisle.services.rules.console.session import Session

router = APIRouter(include_in_schema=False)
DEFAULT_DAYS = 28
EXPORTS = ("summary", "daily", "searches", "searches/no-results", "searches/no-clicks",
           "searches/follow-ups", "positions", "recommendations", "rules")  # fmt: skip
SECTIONS = {
    "summary": {},
    "daily": {},
    "searches": {"limit": 20},
    "searches/no-results": {"limit": 20},
    "searches/no-clicks": {"limit": 20},
    "searches/follow-ups": {"limit": 20},
    "positions": {"depth": 10},
    "recommendations": {},
    "rules": {},
}
CHANGES: dict[str, tuple[Kind, Literal["up", "down", ""]]] = {
    "searches": ("count", "up"),
    "noResultRate": ("rate", "down"),
    "clickThroughRate": ("rate", "up"),
    "conversionRate": ("rate", "up"),
    "revenue": ("money", "up"),
    "emptyQuerySearches": ("count", ""),
}
"""The summary's figures shown with their change against the previous period: how, and which way is good."""


def _day(raw: str | None, fallback: date) -> date:
    try:
        return date.fromisoformat(raw) if raw else fallback
    except ValueError:
        return fallback


def period_of(from_: str | None, to: str | None) -> tuple[date, date]:
    """The page's period: whole UTC days, ``to`` included; unreadable dates fall back to the default.
    A ``from`` after ``to`` stays so: the analytics service refuses it (``period_invalid``) and the page
    says why, rather than showing one day the merchandiser did not ask for."""
    today = datetime.now(UTC).date()
    last = _day(to, today)
    first = _day(from_, last - timedelta(days=DEFAULT_DAYS - 1))
    return first, last


def previous_period(first: date, last: date) -> tuple[date, date]:
    """The period of the same length just before ``first..last`` (whole days, both included)."""
    days = (last - first).days + 1
    return first - timedelta(days=days), first - timedelta(days=1)


async def tenant_figures(request: Request, tenant: str) -> Figures:
    """The formats of ``tenant``'s figures (its configured locale and currency; ``en``/USD when its
    configuration cannot be read: the figures still show)."""
    try:
        config = await run_in_threadpool(request.app.state.rules.tenants.config, tenant)
    except AisleError:
        return Figures.of("en", "USD")
    return Figures.of(config.global_.locale, config.global_.currency)


def changes(fig: Figures, now: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Change | None]:
    """Each figure of :data:`CHANGES` against the previous period's summary (``before``; None: none)."""
    if before is None:
        return dict.fromkeys(CHANGES)
    return {k: fig.change(now[k], before[k], kind, better=way) for k, (kind, way) in CHANGES.items()}


def charted_days(days: list[dict[str, Any]], show_partial: bool) -> tuple[list[dict[str, Any]], list[Any]]:
    """The daily rows the charts draw, and the partial ones left out. A day cut short (today, not over)
    is left out by default: its few searches so far would end every chart in a cliff. With
    ``show_partial`` it is drawn, labelled "(partial)"."""
    if show_partial:
        return days, []
    return [d for d in days if not d["partial"]], [d for d in days if d["partial"]]


def chart_series(days: list[dict[str, Any]], positions: list[dict[str, Any]], fig: Figures) -> dict[str, Any]:
    """What the charts draw (``static/analytics.js``): the daily rows given, clicks by position, and the
    locale and currency their axes are written in."""
    return {
        "days": [d["day"] + (" (partial)" if d["partial"] else "") for d in days],
        "searches": [d["searches"] for d in days],
        "noResultRate": [d["noResultRate"] for d in days],
        "clickThroughRate": [d["clickThroughRate"] for d in days],
        "conversionRate": [d["conversionRate"] for d in days],
        "revenue": [d["revenue"] for d in days],
        "positions": [p["position"] for p in positions],
        "positionClicks": [p["clicks"] for p in positions],
        "positionCtr": [p["clickThroughRate"] for p in positions],
        "locale": fig.locale.replace("_", "-"),
        "currency": fig.currency,
    }


@router.get("/console/{tenant}/analytics")
async def analytics(request: Request, session: Session, tenant: str) -> Response:
    session.require_tenant(tenant)
    first, last = period_of(request.query_params.get("from"), request.query_params.get("to"))
    if not session.can_read_analytics:
        return page(request, session, tenant, "message.html", title="Analytics",
                    message="Your token does not hold the analytics:read scope.")  # fmt: skip
    client = api(request, session)
    when = {"from": first.isoformat(), "to": last.isoformat()}
    before = previous_period(first, last)
    *replies, earlier = await asyncio.gather(
        *(client.analytics(name, tenant, **when, **extra) for name, extra in SECTIONS.items()),
        client.analytics("summary", tenant, **{"from": before[0].isoformat(), "to": before[1].isoformat()}),
    )
    failed = next((r for r in replies if not r.ok), None)
    if failed is not None:
        return page(request, session, tenant, "analytics.html", nav="analytics", error=failed.message,
                    error_code=failed.code, first=first, last=last, report=None)  # fmt: skip
    report: dict[str, Any] = {name: reply.body for name, reply in zip(SECTIONS, replies, strict=True)}
    fig = await tenant_figures(request, tenant)
    days, partial = charted_days(report["daily"]["items"], request.query_params.get("partial") == "show")
    return page(
        request,
        session,
        tenant,
        "analytics.html",
        nav="analytics",
        error=None,
        first=first,
        last=last,
        report=report,
        simulated=report["summary"]["simulatedSources"],
        partial=partial,
        fig=fig,
        before=before,
        changes=changes(fig, report["summary"], earlier.body if earlier.ok else None),
        exports=EXPORTS,
        # inside <script type="application/json">: "<" escaped so no value can close the element
        series_json=json.dumps(chart_series(days, report["positions"]["items"], fig)).replace("<", "\\u003c"),
    )


@router.get("/console/{tenant}/analytics/export/{report:path}")
async def export(request: Request, session: Session, tenant: str, report: str) -> Response:
    """One report as a CSV download (the analytics service's ``format=csv``, with the session's token)."""
    session.require_tenant(tenant)
    name = report.removesuffix(".csv")
    if name not in EXPORTS:
        return Response("no such report", status_code=404, media_type="text/plain")
    first, last = period_of(request.query_params.get("from"), request.query_params.get("to"))
    reply = await api(request, session).analytics(
        name, tenant, format="csv", **{"from": first.isoformat(), "to": last.isoformat()}
    )
    if not reply.ok:
        return Response(reply.message, status_code=reply.status, media_type="text/plain")
    filename = f"{tenant}-{name.replace('/', '-')}-{first.isoformat()}-{last.isoformat()}.csv"
    return Response(
        reply.body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )
