"""The console's Models & jobs page: each model's serving state with the actions that state allows, the
deploy and undeploy jobs' progress, and the tenant's background builds.

Models, containers and jobs are the edit service's (``AISLE_EDIT_URL``), reached with the session's
token. A row offers what can be done now (:func:`actions`): Deploy is disabled on the version already
deployed (and names the version a newer record would deploy), Undeploy on a model that is not deployed
or that a container still uses (the API would refuse it, 409 ``model_in_use``), both while a job of the
model runs. A Deploy or Undeploy answers the model's row with its job, which polls itself until the
job ends and then shows the row's new state; a job another client started (``GET /jobs``) shows on its
row the same way when the page loads. Builds are the build board's progress of the heavy
artifacts (``GET /health``'s ``builds``: text and photo embeddings, a similar-items model, the ranker,
with percent, step and ETA); the card polls while one is running, and a build of a model's type (the
``similar_items`` build of a SIMILAR_ITEMS model) shows on its row too.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from aisle.services.rules.console.api import Api
from aisle.services.rules.console.frame import api, page, render
from aisle.services.rules.console.session import ConsoleSession, Session

router = APIRouter(include_in_schema=False)
ACTIVE = ("accepted", "in_progress")
ACTIVE_BUILDS = ("queued", "running")


def _action(enabled: bool, label: str, why: str = "") -> dict[str, Any]:
    return {"enabled": enabled, "label": label, "why": "" if enabled else why}


def actions(model: dict[str, Any], job: dict[str, Any] | None, used_by: list[str]) -> dict[str, Any]:
    """What the row's Deploy and Undeploy buttons say and whether they can be pressed (``why`` not)."""
    if job is not None and job["status"] in ACTIVE:
        why = f"a {job['kind']} job is running"
        return {"deploy": _action(False, "Deploy", why), "undeploy": _action(False, "Undeploy", why)}
    dep = model.get("deployment") or {}
    version = model["version"]
    deployed = dep.get("status") == "deployed"
    if dep.get("status") == "training":
        deploy = _action(False, "Deploy", "being built: the build deploys it")
    elif deployed and dep.get("modelVersion") == version:
        deploy = _action(False, "Deploy", f"this version (v{version}) is deployed")
    elif deployed:
        deploy = _action(True, f"Deploy v{version}")  # a newer version than the one serving
    else:
        deploy = _action(True, "Deploy")
    if not deployed:
        undeploy = _action(False, "Undeploy", "not deployed")
    elif used_by:
        undeploy = _action(False, "Undeploy", "used by " + ", ".join(used_by) + ": take it out of them first")
    else:
        undeploy = _action(True, "Undeploy")
    return {"deploy": deploy, "undeploy": undeploy}


async def _users(client: Api, tenant: str) -> dict[str, list[str]]:
    """model id -> the containers whose slots use it."""
    reply = await client.edit("GET", "/containers", tenant)
    users: dict[str, list[str]] = {}
    for c in reply.body if reply.ok and isinstance(reply.body, list) else []:
        for slot in c.get("slotConfigurations", []):
            users.setdefault(slot["modelId"], []).append(c["containerId"])
    return users


async def _builds(client: Api, tenant: str) -> list[dict[str, Any]]:
    """The tenant's background builds (the edit service's ``GET /health``), running ones first."""
    reply = await client.edit("GET", "/health", tenant)
    found = reply.body.get("builds", {}).get(tenant, []) if reply.ok and isinstance(reply.body, dict) else []
    return sorted(found, key=lambda b: (b["state"] not in ACTIVE_BUILDS, b["artifact"]))


async def _running(client: Api, tenant: str) -> dict[str, dict[str, Any]]:
    """model id -> its unfinished deploy or undeploy job (the edit service's ``GET /jobs``), whoever
    started it: another console tab, a colleague, the API."""
    reply = await client.edit("GET", "/jobs", tenant)
    jobs = reply.body.get("jobs", []) if reply.ok and isinstance(reply.body, dict) else []
    return {j["modelId"]: j for j in jobs if j.get("modelId") and j.get("kind") in ("deploy", "undeploy")}


async def _live(client: Api, session: ConsoleSession, tenant: str) -> tuple[dict[str, Any], bool | None]:
    """The last 28 days' figures of each model, when analytics answers (and whether simulated)."""
    if not session.can_read_analytics:
        return {}, None
    figures = await client.analytics("models", tenant)
    if not figures.ok:
        return {}, None
    return {row["modelId"]: row for row in figures.body["items"]}, figures.body["simulated"]


def row(
    model: dict[str, Any],
    job: dict[str, Any] | None,
    users: dict[str, list[str]],
    builds: list[dict[str, Any]],
) -> dict[str, Any]:
    """What a model's row shows: the model, its job, its actions and the build of its type."""
    used_by = users.get(model["model_id"], [])
    build = next((b for b in builds if b["artifact"] == str(model["model_type"]).lower()), None)
    return {"m": model, "job": job, "used_by": used_by, "can": actions(model, job, used_by), "build": build}


@router.get("/console/{tenant}/models")
async def models(request: Request, session: Session, tenant: str) -> Response:
    session.require_tenant(tenant)
    client = api(request, session)
    reply, users, builds, (live, simulated), running = await asyncio.gather(
        client.edit("GET", "/models", tenant),
        _users(client, tenant),
        _builds(client, tenant),
        _live(client, session, tenant),
        _running(client, tenant),
    )
    models_ = reply.body["models"] if reply.ok else []
    rows = [row(m, running.get(m["model_id"]), users, builds) for m in models_]
    return page(
        request,
        session,
        tenant,
        "models.html",
        nav="models",
        rows=rows,
        builds=builds,
        error=None if reply.ok else reply.message,
        live=live,
        simulated=simulated,
    )


async def _row(
    request: Request,
    session: ConsoleSession,
    tenant: str,
    model_id: str,
    job: dict[str, Any] | None,
    error: str | None = None,
) -> Response:
    """The model's row as it stands now, with ``job`` (polling itself while the job runs)."""
    client = api(request, session)
    got, users, builds, (live, simulated) = await asyncio.gather(
        client.edit("GET", f"/models/{model_id}", tenant),
        _users(client, tenant),
        _builds(client, tenant),
        _live(client, session, tenant),
    )
    if not got.ok:
        return render(request, "job.html", session=session, tenant=tenant, job=None, error=got.message)
    return render(
        request,
        "model_row.html",
        session=session,
        tenant=tenant,
        r=row(got.body, job, users, builds),
        live=live,
        simulated=simulated,
        error=error,
    )


@router.post("/console/{tenant}/models/{model_id}/{action}")
async def deploy(request: Request, session: Session, tenant: str, model_id: str, action: str) -> Response:
    """Start a deploy or undeploy job; the answer is the model's row with the job, which polls itself."""
    session.require_tenant(tenant)
    if action not in ("deploy", "undeploy"):
        return Response(status_code=404)
    reply = await api(request, session).edit("POST", f"/models/{model_id}/{action}", tenant)
    return await _row(
        request,
        session,
        tenant,
        model_id,
        reply.body if reply.ok else None,
        None if reply.ok else reply.message,
    )


@router.get("/console/{tenant}/models/{model_id}/row")
async def model_row(
    request: Request, session: Session, tenant: str, model_id: str, job: str = ""
) -> Response:
    """The model's row again (a running job's poll): the job's progress, then the row's new state."""
    session.require_tenant(tenant)
    got = await api(request, session).edit("GET", f"/jobs/{job}", tenant) if job else None
    return await _row(request, session, tenant, model_id, got.body if got and got.ok else None)


@router.get("/console/{tenant}/builds")
async def builds(request: Request, session: Session, tenant: str) -> Response:
    """The builds card again (it polls itself while a build is queued or running)."""
    session.require_tenant(tenant)
    found = await _builds(api(request, session), tenant)
    return render(request, "builds.html", session=session, tenant=tenant, builds=found)


@router.get("/console/{tenant}/jobs/{job_id}")
async def job(request: Request, session: Session, tenant: str, job_id: str) -> Response:
    """A job's progress on its own (polls itself until the job ends)."""
    session.require_tenant(tenant)
    reply = await api(request, session).edit("GET", f"/jobs/{job_id}", tenant)
    return render(
        request,
        "job.html",
        session=session,
        tenant=tenant,
        job=reply.body if reply.ok else None,
        error=None if reply.ok else reply.message,
    )
