"""The console's Experiments section: a tenant's A/B tests, a form for a new one, and each test's page.

The list shows every experiment with its status; the form makes a draft from up to five variant rows
(id, weight, rules switched off or on, hybrid on/off, ranker version or none). An experiment's page has
start, stop and promote buttons (Promote preselects the winner; without one it asks for an explicit
choice), the plan against the sample so far (on the primary metric), the sample-ratio check with its
p-value, the results table (each figure with its 95% interval, the difference to control in points
and relative, with its interval and adjusted p-value), the interval chart (Chart.js), the decision,
what each variant changes in words, and the history in time order
(:mod:`~aisle.services.rules.console.experiment_words`). Every figure comes from the rules service's
``/experiments`` API with the session's token; simulated traffic is labelled so.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from aisle.services.rules.console import experiment_words as words
from aisle.services.rules.console.api import Api
from aisle.services.rules.console.frame import api, page, redirect
from aisle.services.rules.console.session import Session

router = APIRouter(include_in_schema=False)
ROWS = 5
ACTIONS = ("start", "stop", "promote")


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


def variants_of(form: FormData) -> list[dict[str, Any]]:
    """The variant rows of the new-experiment form that have an id (row 0 is the control)."""
    variants = []
    for i in range(ROWS):
        vid = str(form.get(f"v{i}_id", "")).strip()
        if not vid:
            continue
        changes: dict[str, Any] = {}
        if off := _ids(str(form.get(f"v{i}_rules_off", ""))):
            changes["rulesOff"] = off
        if on := _ids(str(form.get(f"v{i}_rules_on", ""))):
            changes["rulesOn"] = on
        hybrid = str(form.get(f"v{i}_hybrid", ""))
        if hybrid in ("on", "off"):
            changes["hybrid"] = {"enabled": hybrid == "on"}
        ranker = str(form.get(f"v{i}_ranker", "")).strip()
        if ranker == "none":
            changes["ranker"] = "none"
        elif ranker.isdigit():
            changes["ranker"] = int(ranker)
        weight_text = str(form.get(f"v{i}_weight", "1")).strip() or "1"
        try:
            weight = float(weight_text)
        except ValueError:
            weight = -1.0  # refused by the API with the field named
        variants.append(
            {"id": vid, "name": str(form.get(f"v{i}_name", "")).strip(), "weight": weight, "changes": changes}
        )
    return variants


def _percent(raw: str | None, fallback: float) -> float:
    try:
        return float(raw) if raw else fallback
    except ValueError:
        return fallback


@router.get("/console/{tenant}/experiments")
async def experiments(request: Request, session: Session, tenant: str) -> Response:
    session.require_tenant(tenant)
    reply = await api(request, session).rules("GET", "/experiments", tenant)
    listed = reply.body["experiments"] if reply.ok else []
    return page(
        request,
        session,
        tenant,
        "experiments.html",
        nav="experiments",
        rows=ROWS,
        experiments=listed,
        error=None if reply.ok else reply.message,
        form={},
    )


@router.post("/console/{tenant}/experiments")
async def create_experiment(request: Request, session: Session, tenant: str) -> Response:
    session.require_tenant(tenant)
    form = await request.form()
    body: dict[str, Any] = {
        "name": str(form.get("name", "")).strip(),
        "description": str(form.get("description", "")).strip(),
        "primaryMetric": str(form.get("primaryMetric", "conversionRate")),
        "variants": variants_of(form),
    }
    mde = str(form.get("mde", "")).strip()
    if mde:
        try:
            body["minimumDetectableEffect"] = float(mde) / 100
        except ValueError:
            body["minimumDetectableEffect"] = -1
    client = api(request, session)
    reply = await client.rules("POST", "/experiments", tenant, json=body)
    if reply.ok:
        return redirect(request, f"/console/{tenant}/experiments/{reply.body['id']}")
    listed = await client.rules("GET", "/experiments", tenant)
    return page(
        request,
        session,
        tenant,
        "experiments.html",
        nav="experiments",
        rows=ROWS,
        experiments=listed.body["experiments"] if listed.ok else [],
        error=reply.message,
        form=dict(form),
    )


def _chart(results: dict[str, Any] | None) -> str:
    """The interval chart's data as JSON for a ``<script type="application/json">`` ("<" escaped so no
    value can close the element); ``null`` without results."""
    chart = None
    if results is not None:
        metric = results["primaryMetric"]
        chart = {
            "metric": metric,
            "labels": [v["name"] for v in results["variants"]],
            "values": [v[metric]["value"] for v in results["variants"]],
            "intervals": [[v[metric]["low"], v[metric]["high"]] for v in results["variants"]],
        }
    return json.dumps(chart).replace("<", "\\u003c")


async def _draft_plan(request: Request, client: Api, tenant: str, exp: dict[str, Any]) -> dict[str, Any]:
    """The sample size to plan for before starting, at the baseline conversion the form asks for."""
    baseline = _percent(request.query_params.get("baseline"), 5.0)
    params = {
        "baseline": baseline / 100,
        "mde": exp["minimumDetectableEffect"],
        "variants": len(exp["variants"]),
    }
    got = await client.rules("GET", "/experiments/sample-size", tenant, params=params)
    return {"baseline": baseline, **got.body} if got.ok else {"baseline": baseline, "error": got.message}


@router.get("/console/{tenant}/experiments/{experiment_id}")
async def experiment(request: Request, session: Session, tenant: str, experiment_id: str) -> Response:
    session.require_tenant(tenant)
    client = api(request, session)
    reply = await client.rules("GET", f"/experiments/{experiment_id}", tenant)
    if not reply.ok:
        return page(request, session, tenant, "message.html", title="Experiment", message=reply.message)
    exp = reply.body
    planned = words.shares(exp["variants"])
    for variant in exp["variants"]:  # what it changes, in words
        variant["changed"] = words.change_words(variant["changes"])
        variant["line"] = words.variant_line(variant, planned[variant["id"]])
    plan = await _draft_plan(request, client, tenant, exp) if exp["status"] == "draft" else None
    results, error = None, None
    if exp["startedAt"] is not None and session.can_read_analytics:
        got = await client.rules("GET", f"/experiments/{experiment_id}/results", tenant)
        results, error = (got.body, None) if got.ok else (None, got.message)
    return page(
        request,
        session,
        tenant,
        "experiment.html",
        nav="experiments",
        exp=exp,
        results=results,
        error=error,
        message=request.query_params.get("done"),
        plan=plan,
        progress=words.progress(results) if results else None,
        split=words.split_rows(results) if results else [],
        history=words.history_lines(exp),
        chosen=words.promote_choice(results),
        names=words.NAMES,
        chart_json=_chart(results),
    )


@router.post("/console/{tenant}/experiments/{experiment_id}/{action}")
async def act(request: Request, session: Session, tenant: str, experiment_id: str, action: str) -> Response:
    """Start, stop or promote (the form's ``variant``), then back to the experiment's page."""
    session.require_tenant(tenant)
    if action not in ACTIONS:
        return Response("no such action", status_code=404, media_type="text/plain")
    form = await request.form()
    chosen = str(form.get("variant", "")).strip()
    if action == "promote" and not chosen:
        message = "Choose the variant to promote: no variant won, so the console does not pick one for you."
        return page(request, session, tenant, "message.html", title="Not done", message=message)
    kwargs: dict[str, Any] = {"json": {"variant": chosen}} if action == "promote" else {}
    reply = await api(request, session).rules(
        "POST", f"/experiments/{experiment_id}/{action}", tenant, **kwargs
    )
    if not reply.ok:
        return page(request, session, tenant, "message.html", title="Not done", message=reply.message)
    return redirect(request, f"/console/{tenant}/experiments/{experiment_id}?done={action}")
