"""Render every error as one JSON envelope; no input reaches a 500.

Standard envelope (all services but predict): ``{"error": {"code", "message", "details"?}}``.
Predict envelope (spec "PredictResponse"): ``{"success": false, "response_data": [], "error": {...}}``.
Codes and their statuses come from the catalogue (:class:`~aisle.core.errors.ErrorCode`). Every error
object carries ``requestId``, the request's ``X-Request-Id`` (:mod:`aisle.services.common.request_id`).
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from aisle.core.errors import HTTP_STATUS_CODES, AisleError, ErrorCode
from aisle.services.common.request_id import request_id_of

log = logging.getLogger("aisle.errors")

Envelope = Literal["standard", "predict"]


def error_body(error: dict[str, Any], envelope: Envelope, request_id: str | None = None) -> dict[str, Any]:
    """The envelope around ``error`` (``{code, message, details?}``), with ``requestId`` when given."""
    if request_id is not None:
        error = {**error, "requestId": request_id}
    if envelope == "predict":
        return {"success": False, "response_data": [], "error": error}
    return {"error": error}


RULE_ERRORS = frozenset({"value_error", "assertion_error"})
"""pydantic error types raised by Aisle's own validators (rules the OpenAPI schema cannot state)."""


def validation_code(exc: RequestValidationError) -> ErrorCode:
    """``value_invalid`` (400) when every problem is one of Aisle's own rules, else ``validation_error``.

    A request that breaks the documented schema (a type, a pattern, a bound, a missing field) is a 422;
    one the schema admits but a rule it cannot state refuses (a number beyond 2^53 in a free-form value,
    two fields that exclude each other, a redirect to another site) is a 400, so a schema-valid request
    is never answered 422.
    """
    errors = exc.errors()
    if errors and all(err.get("type") in RULE_ERRORS for err in errors):
        return ErrorCode.VALUE_INVALID
    return ErrorCode.VALIDATION_ERROR


def validation_error_dict(exc: RequestValidationError) -> dict[str, Any]:
    """Name the first offending field, e.g. ``body.size: Input should be less than or equal to 100``."""
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        problems.append({"field": loc, "message": err.get("msg", "invalid")})
    first = problems[0] if problems else {"field": "", "message": "invalid request"}
    return {
        "code": str(validation_code(exc)),
        "message": f"{first['field']}: {first['message']}" if first["field"] else first["message"],
        "details": problems,
    }


def install_error_handlers(app: FastAPI, envelope: Envelope = "standard") -> None:
    """Register handlers for AisleError, validation errors, HTTP errors and anything unexpected."""

    @app.exception_handler(AisleError)
    async def _aisle(request: Request, exc: AisleError) -> JSONResponse:
        headers = getattr(exc, "headers", None)
        body = error_body(exc.to_dict(), envelope, request_id_of(request.scope))
        return JSONResponse(body, status_code=exc.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        status = validation_code(exc).status
        body = error_body(validation_error_dict(exc), envelope, request_id_of(request.scope))
        return JSONResponse(body, status_code=status)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = str(HTTP_STATUS_CODES.get(exc.status_code, ErrorCode.HTTP_ERROR))
        return JSONResponse(
            error_body({"code": code, "message": str(exc.detail)}, envelope, request_id_of(request.scope)),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Runs in Starlette's outermost middleware, after RequestIdMiddleware has returned: the id comes
        # from the scope, and the response gets its X-Request-Id header here.
        rid = request_id_of(request.scope)
        log.exception("unhandled error", exc_info=exc, extra={"request_id": rid or "-"})
        error = {"code": str(ErrorCode.INTERNAL_ERROR), "message": "internal error; see the service log"}
        headers = {"X-Request-Id": rid} if rid else None
        return JSONResponse(
            error_body(error, envelope, rid), status_code=ErrorCode.INTERNAL_ERROR.status, headers=headers
        )


RETRY_AFTER_DOC = {
    "description": "Seconds to wait before retrying (RFC 9110 section 10.2.3); the outage is transient.",
    "schema": {"type": "integer", "minimum": 0},
}
"""OpenAPI description of the ``Retry-After`` header every 503 carries."""
UNAVAILABLE_DOC = (
    "a backend the request needs is unavailable: object storage (storage_unavailable), the event store "
    "(event_store_unavailable), another service, or the tenant's configuration is invalid; Retry-After "
    "says when to retry"
)


def error_responses(*statuses: int, envelope: Envelope = "standard") -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries documenting the (``envelope``) error envelope for the given
    statuses (a 503 with its ``Retry-After`` header)."""
    from aisle.services.common.schemas import ErrorEnvelope, PredictErrorEnvelope

    model = PredictErrorEnvelope if envelope == "predict" else ErrorEnvelope
    out: dict[int | str, dict[str, Any]] = {}
    for s in statuses:
        out[s] = {"model": model, "description": str(HTTP_STATUS_CODES.get(s, "error"))}
        if s == ErrorCode.UNAVAILABLE.status:
            out[s] |= {"description": UNAVAILABLE_DOC, "headers": {"Retry-After": RETRY_AFTER_DOC}}
    return out
