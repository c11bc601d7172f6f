"""The search service's ``POST /recommendations``: a plain relay to the predict service's ``POST /predict``.

The container's saved recommendation rules are the predict engine's business (it applies them on every
answer of the container, see :mod:`aisle.recs.serving.saved_rules`), so this relay reads no container:
8080 and 8081 answer the same request with the same list.
"""

from __future__ import annotations

import httpx
from fastapi import APIRouter, Request
from fastapi.responses import Response

from aisle.core.auth.scopes import RECS_READ
from aisle.core.errors import ErrorCode, Unavailable
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TenantQuery
from aisle.services.common.predict_request import PredictRequest
from aisle.services.common.request_id import request_id_of
from aisle.services.search.state import State

router = APIRouter()

RELAYED_HEADERS = ("Retry-After", "Aisle-Degraded")
"""Headers of predict's answer that ``POST /recommendations`` passes on (a 503's retry hint, and the
note that the items are not personalised)."""


@router.post(
    "/recommendations",
    dependencies=[scoped(RECS_READ)],
    responses=error_responses(400, 401, 403, 404, 422, 503),
)
async def recommendations(
    state: State, request: Request, tenant: TenantQuery, _body: PredictRequest
) -> Response:
    """Proxied to the predict service's ``POST /predict``: the same body (checked here first), status,
    envelope and ``Aisle-Degraded`` header (set when the items are not personalised: the event store is
    down).

    Predict applies the container's saved recommendation rules (``recommendationRules``, authored in the
    merchandising console) before the request's ``actions``; together at most 50, else predict's 400
    ``value_invalid``. The request's id goes along (``X-Request-Id``), so both services' log lines of it
    share one id. An unreachable predict service is a 503 ``recommendations_unavailable``.
    """
    headers = {"content-type": "application/json"}
    if (request_id := request_id_of(request.scope)) is not None:
        headers["x-request-id"] = request_id
    if "authorization" in request.headers:
        headers["authorization"] = request.headers["authorization"]
    try:
        resp = await state.predict_client.post(
            "/predict", params={"tenant": tenant}, content=await request.body(), headers=headers
        )
    except httpx.HTTPError as exc:
        raise Unavailable(
            f"the recommendation service is unreachable: {exc.__class__.__name__}",
            code=ErrorCode.RECOMMENDATIONS_UNAVAILABLE,
        ) from exc
    relayed = {k: v for k in RELAYED_HEADERS if (v := resp.headers.get(k)) is not None}
    return Response(
        resp.content, status_code=resp.status_code, media_type="application/json", headers=relayed
    )
