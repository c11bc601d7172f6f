"""One error root for Aisle and its HTTP rendering.

Every error a user can cause is an :class:`AisleError` with a stable snake_case ``code``,
a message that says what was wrong, and the HTTP status it maps to. Services render it as
``{"error": {"code": ..., "message": ..., "details": ...}}`` (the predict service wraps the
same object in the spec's ``{success, response_data, error}`` envelope).
"""

from __future__ import annotations

from typing import Any


class AisleError(Exception):
    """Base of every user-facing error.

    Args:
        code: stable snake_case identifier clients can match on.
        message: human-readable explanation naming the offending tenant, file, field or value.
        status: HTTP status code the services answer with.
        details: optional JSON-serialisable extra context.
        headers: optional HTTP response headers (e.g. ``WWW-Authenticate`` on a 401, RFC 6750 section 3).
    """

    code: str = "aisle_error"
    status: int = 400
    headers: dict[str, str] | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        details: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.details = details
        if headers is not None:
            self.headers = headers

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body


class BadRequest(AisleError):
    code = "bad_request"
    status = 400


class ValidationFailed(AisleError):
    code = "validation_error"
    status = 422


class NotFound(AisleError):
    code = "not_found"
    status = 404


class Conflict(AisleError):
    code = "conflict"
    status = 409


class Unavailable(AisleError):
    code = "unavailable"
    status = 503


class TenantNotFound(NotFound):
    code = "tenant_not_found"

    def __init__(self, tenant: str) -> None:
        super().__init__(f"tenant '{tenant}' does not exist in storage", details={"tenant": tenant})


class ConfigInvalid(AisleError):
    """A tenant configuration file is missing or does not validate."""

    code = "tenant_config_invalid"
    status = 503  # the tenant is unusable until an operator fixes the file; not the caller's fault

    def __init__(self, tenant: str, file: str, problem: str, field: str | None = None) -> None:
        where = f"{tenant}/{file}" + (f" field '{field}'" if field else "")
        super().__init__(f"{where}: {problem}", details={"tenant": tenant, "file": file, "field": field})
        self.tenant, self.file, self.field = tenant, file, field
