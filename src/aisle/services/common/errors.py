"""Render every error as one JSON envelope; no input reaches a 500.

Standard envelope (all services but predict): ``{"error": {"code", "message", "details"?}}``.
Predict envelope (spec "PredictResponse"): ``{"success": false, "response_data": [], "error": {...}}``.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from aisle.core.errors import AisleError

log = logging.getLogger("aisle.errors")

Envelope = Literal["standard", "predict"]


def error_body(error: dict[str, Any], envelope: Envelope) -> dict[str, Any]:
    if envelope == "predict":
        return {"success": False, "response_data": [], "error": error}
    return {"error": error}


def validation_error_dict(exc: RequestValidationError) -> dict[str, Any]:
    """Name the first offending field, e.g. ``body.size: Input should be less than or equal to 100``."""
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        problems.append({"field": loc, "message": err.get("msg", "invalid")})
    first = problems[0] if problems else {"field": "", "message": "invalid request"}
    return {
        "code": "validation_error",
        "message": f"{first['field']}: {first['message']}" if first["field"] else first["message"],
        "details": problems,
    }


_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
}


def install_error_handlers(app: FastAPI, envelope: Envelope = "standard") -> None:
    """Register handlers for AisleError, validation errors, HTTP errors and anything unexpected."""

    @app.exception_handler(AisleError)
    async def _aisle(_: Request, exc: AisleError) -> JSONResponse:
        headers = getattr(exc, "headers", None)
        return JSONResponse(error_body(exc.to_dict(), envelope), status_code=exc.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body(validation_error_dict(exc), envelope), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "http_error")
        return JSONResponse(
            error_body({"code": code, "message": str(exc.detail)}, envelope),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:  # pragma: no cover - safety net
        log.exception("unhandled error", exc_info=exc)
        return JSONResponse(
            error_body(
                {"code": "internal_error", "message": "internal error; see the service log"}, envelope
            ),
            status_code=500,
        )


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries documenting the error envelope for the given statuses."""
    from aisle.services.common.schemas import ErrorEnvelope

    return {s: {"model": ErrorEnvelope, "description": _STATUS_CODES.get(s, "error")} for s in statuses}
