"""Routes of the predict service: parse, call the predict engine, render the spec's envelope.

Module-level handlers on :data:`router`; the engine and the token check come from :mod:`.deps`.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from aisle.analytics.records import Answer, new_attribution_token
from aisle.core.auth.scopes import RECS_READ
from aisle.core.validation import EXTERNAL_ID_PATTERN, ID_PATTERN
from aisle.experiments.assignment import join_tags, tag
from aisle.recs.serving import ItemOut, PredictParams, PredictQuery
from aisle.services.common.auth import require_scope
from aisle.services.common.errors import RETRY_AFTER_DOC
from aisle.services.common.metrics import count_tenant
from aisle.services.common.outcomes import record
from aisle.services.common.params import TenantQuery
from aisle.services.common.schemas import PredictErrorEnvelope
from aisle.services.predict.deps import Engine
from aisle.services.predict.schemas import (
    BundleRecommendationRequest,
    BundlesResponse,
    EvaluationRequest,
    EvaluationResponse,
    PredictRequest,
    PredictResponse,
)

router = APIRouter()
READ = Depends(require_scope(RECS_READ))


def _errors(*layers: dict[str, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI error responses; later layers override earlier descriptions of the same status."""
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer)
    out: dict[int | str, dict[str, Any]] = {}
    for s, d in sorted(merged.items()):
        out[int(s)] = {"model": PredictErrorEnvelope, "description": d}
        if s == "503":
            out[503]["headers"] = {"Retry-After": RETRY_AFTER_DOC}
    return out


AUTH_ERRORS = {"401": "missing or invalid bearer token", "403": "scope recs:read or tenant not granted"}
COMMON = {
    **AUTH_ERRORS,
    "422": "invalid body or query; a missing `tenant` is named (`query.tenant`)",
    "503": "object storage unavailable (storage_unavailable), the token service's keys unreadable "
    "(auth_unavailable) or the tenant configuration invalid (tenant_config_invalid); Retry-After says "
    "when to retry. An unreachable event store is not a 503: see Aisle-Degraded on the 200",
}

DEGRADED_HEADER = "Aisle-Degraded"
"""Set on a 200 answered without something it would normally use (see :data:`DEGRADED_DOC`)."""
DEGRADED_DOC = {
    "description": "Present only when the answer is complete but not personalised: "
    "`personalization;reason=event_store_unavailable` while the event store (Redis) is unreachable "
    "(a structured-field list, RFC 8941). The items are then what an anonymous visitor gets.",
    "schema": {"type": "string", "example": "personalization;reason=event_store_unavailable"},
}


def _ok_doc(*layers: dict[str, str]) -> dict[int | str, dict[str, Any]]:
    """``_errors(*layers)`` plus the 200's ``Aisle-Degraded`` header."""
    return {200: {"headers": {DEGRADED_HEADER: DEGRADED_DOC}}, **_errors(*layers)}


def item_json(item: ItemOut) -> dict[str, Any]:
    return {k: v for k, v in item.__dict__.items() if v is not None}


def ok(
    data: Any,
    degraded: list[str] | None = None,
    token: str | None = None,
    experiments: list[tuple[str, str]] | None = None,
) -> Response:
    """The success envelope, serialised with orjson (the route's response_model documents it); with
    ``degraded`` codes, the ``Aisle-Degraded`` header saying personalisation was skipped and why;
    with ``token``, the answer's ``attributionToken``; with ``experiments``, the variants served."""
    body: dict[str, Any] = {"success": True, "response_data": data, "error": None}
    if token is not None:
        body["attributionToken"] = token
    if experiments:
        body["experiments"] = [{"experimentId": e, "variantId": v} for e, v in experiments]
    headers = None
    if degraded:
        reasons = ", ".join(f"personalization;reason={code}" for code in degraded)
        headers = {DEGRADED_HEADER: reasons}
    return Response(orjson.dumps(body), media_type="application/json", headers=headers)


def to_query(body: PredictRequest, container_id: str) -> PredictQuery:
    p = body.predictParams
    return PredictQuery(
        container_id=container_id,
        seeds=body.productIds,
        model_ids=body.modelIds,
        visitor_id=body.visitorId,
        user_id=body.userId,
        actions=body.actions,
        store_id=body.storeId,
        params=PredictParams(
            return_product=p.returnProduct,
            return_score=p.returnScore,
            strict_filtering=p.strictFiltering,
            diversity_level=p.diversityLevel,
            debug=p.debug,
            container_rules=p.containerRules,
            backfill_order=p.backfillOrder,
        ),
    )


@router.post(
    "/predict",
    response_model=PredictResponse,
    dependencies=[READ, count_tenant("predict")],
    responses=_ok_doc(
        COMMON,
        {
            "400": "`modelIds` not in the container (model_ids_unknown), an action's unknown slot "
            "(action_slot_unknown) or condition field (condition_field_unknown), the container's saved "
            "rules and `actions` together over 50 (value_invalid)",
            "404": "unknown tenant (tenant_not_found) or container (container_not_found)",
            "409": "a slot's model is not deployed (model_not_deployed)",
            "503": "a slot's model is still being trained by a background build (model_training, "
            "Retry-After: 30); " + COMMON["503"],
            "422": "invalid body, e.g. empty `productIds` or a malformed `storeId` (validation_error), or "
            "missing `tenant`",
        },
    ),
)
async def predict(body: PredictRequest, tenant: TenantQuery, engine: Engine, request: Request) -> Response:
    """Recommendations of the container ``containerId`` for the seed products.

    Runs the container's slots (only ``modelIds`` when given) in placement order, applies the
    container's saved recommendation rules and then the request's actions, personalises with
    ``visitorId`` / ``userId`` and merges the slots' items. ``predictParams.containerRules: false``
    leaves the saved rules out (the console's preview of rules being edited).
    """
    # As search does (aisle.core.readiness): a request with nothing to wait for is about 1 ms of
    # pure-Python CPU from the engine's caches, answered inline (a thread adds ~0.4 ms of hand-off and
    # no parallelism under the GIL), with the parts readiness looked up; anything needing I/O (model or
    # catalog load, config or container refresh, visitor events) runs in a thread. With the container
    # cache on, that holds for S3 as for a local folder.
    started = time.perf_counter()
    query = to_query(body, body.containerId)
    ready = engine.readiness(tenant, query)
    if ready.waits:
        out = await run_in_threadpool(engine.recommend, tenant, query)
    else:
        out = engine.recommend(tenant, query, ready=ready)
    token = new_attribution_token()
    answer = Answer(
        tenant,
        token,
        "recommendations",
        time.time(),
        tuple(i.id for i in out.items),
        len(out.items),
        container_id=body.containerId,
        models=tuple(out.models),
        variant=join_tags([tag(e, v) for e, v in out.experiments]),
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        visitor_id=body.visitorId,
        user_id=body.userId,
    )
    record(request, answer)
    return ok([item_json(i) for i in out.items], out.degraded, token, out.experiments)


@router.post(
    "/evaluation",
    response_model=EvaluationResponse,
    dependencies=[READ],
    responses=_ok_doc(
        COMMON,
        {
            "400": "`modelType` is not the model's type (model_type_mismatch), or a bad action",
            "404": "unknown tenant or model (model_not_found)",
        },
    ),
)
def evaluation(body: EvaluationRequest, tenant: TenantQuery, engine: Engine) -> Response:
    """One named model's items (deployed or not) and its offline metrics, for quality checks."""
    out = engine.evaluate(tenant, to_query(body, ""), body.modelType, body.modelName, k=body.k)
    out["items"] = [item_json(i) for i in out["items"]]
    degraded = out.pop("degraded")
    return ok(out, degraded)


@router.get(
    "/bundles",
    response_model=BundlesResponse,
    dependencies=[READ],
    responses=_errors(COMMON, {"404": "unknown tenant or container, or no deployed bundle model"}),
)
def bundles(
    engine: Engine,
    tenant: TenantQuery,
    productId: Annotated[str, Query(pattern=EXTERNAL_ID_PATTERN, description="Seed product.")],
    containerId: Annotated[
        str | None, Query(pattern=ID_PATTERN, description="Container whose bundle slot serves (optional).")
    ] = None,
) -> Response:
    """Bundle plans for a product: name, description, categories; no products attached."""
    return ok(engine.bundles.plans(tenant, productId, containerId))


@router.post(
    "/bundles/recommendations",
    response_model=BundlesResponse,
    dependencies=[READ],
    responses=_ok_doc(
        COMMON,
        {
            "400": "an action's unknown condition field",
            "404": "unknown tenant, container or bundle model",
        },
    ),
)
def bundle_recommendations(
    body: BundleRecommendationRequest, tenant: TenantQuery, engine: Engine
) -> Response:
    """The plans (given, or the model's) with each category filled with candidates by ``strategy``."""
    given = None if body.bundles is None else [b.model_dump() for b in body.bundles]
    filled, degraded = engine.bundles.recommendations(
        tenant,
        body.productId,
        body.containerId,
        given,
        body.strategy,
        body.perCategory,
        body.actions,
        visitor_id=body.visitorId,
        user_id=body.userId,
    )
    return ok(filled, degraded)
