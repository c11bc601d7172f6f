"""One error root for Aisle and its HTTP rendering.

Every error a user can cause is an :class:`AisleError` with a stable snake_case ``code`` from the
catalogue :class:`ErrorCode` (``aisle/core/error_codes.py``), which also fixes the HTTP status it maps to,
and a message that says what was wrong. Services render it as
``{"error": {"code": ..., "message": ..., "details": ...}}`` (the predict service wraps the
same object in the spec's ``{success, response_data, error}`` envelope).

Raise ``NotFound("...", code=ErrorCode.RULE_NOT_FOUND)``, or subclass with ``code = ErrorCode.X``.
"""

from __future__ import annotations

from typing import Any

from aisle.core.error_codes import HTTP_STATUS_CODES, ErrorCode

__all__ = [
    "HTTP_STATUS_CODES",
    "AisleError",
    "BadRequest",
    "ConfigInvalid",
    "Conflict",
    "ErrorCode",
    "EventStoreUnavailable",
    "NotFound",
    "StorageUnavailable",
    "TenantNotFound",
    "Unavailable",
    "ValidationFailed",
]


class AisleError(Exception):
    """Base of every user-facing error.

    The HTTP status is the catalogue's for the error's code. A code string not in the catalogue keeps the
    class's status (never a 500); ``tests/core/test_error_codes.py`` fails on any such string in ``src``.

    Args:
        code: a catalogued code (an :class:`ErrorCode`, or its string), stable for clients to match on.
        message: human-readable explanation naming the offending tenant, file, field or value.
        status: only to relay another service's error with the status it answered; else the catalogue's.
        details: optional JSON-serialisable extra context.
        headers: optional HTTP response headers (e.g. ``WWW-Authenticate`` on a 401, RFC 6750 section 3).
    """

    code: str = ErrorCode.AISLE_ERROR
    status: int = ErrorCode.AISLE_ERROR.status
    headers: dict[str, str] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass's ``code`` class attribute sets its ``status`` (unless the class declares one)."""
        super().__init_subclass__(**kwargs)
        known = ErrorCode.lookup(cls.code)
        if known is not None and "status" not in cls.__dict__:
            cls.status = known.status

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | str | None = None,
        status: int | None = None,
        details: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
            known = ErrorCode.lookup(code)
            if known is not None:
                self.status = known.status
        if status is not None:
            self.status = status
        self.details = details
        if headers is not None:
            self.headers = headers

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": str(self.code), "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body


# The generic errors, one per status, that specific ones subclass. ``code: str`` keeps a subclass free to
# name its code by the catalogued string as well as by the member.


class BadRequest(AisleError):
    code: str = ErrorCode.BAD_REQUEST


class ValidationFailed(AisleError):
    code: str = ErrorCode.VALIDATION_ERROR


class NotFound(AisleError):
    code: str = ErrorCode.NOT_FOUND


class Conflict(AisleError):
    code: str = ErrorCode.CONFLICT


class Unavailable(AisleError):
    """503: a backend the request needs (object storage, the event store, another service) is unavailable.

    Carries ``Retry-After: <retry_after>`` (seconds; RFC 9110 section 10.2.3), so a client knows the
    outage is transient and when to try again.
    """

    code: str = ErrorCode.UNAVAILABLE
    retry_after: int = 1

    def __init__(self, message: str, *, retry_after: int | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        seconds = self.retry_after if retry_after is None else retry_after
        self.headers = {**(self.headers or {}), "Retry-After": str(seconds)}


class StorageUnavailable(Unavailable):
    """503 ``storage_unavailable``: object storage failed to answer (see ``aisle.core.storage``)."""

    code = ErrorCode.STORAGE_UNAVAILABLE


class EventStoreUnavailable(Unavailable):
    """503 ``event_store_unavailable``: the event store (Redis) cannot be reached."""

    code = ErrorCode.EVENT_STORE_UNAVAILABLE


class TenantNotFound(NotFound):
    code = ErrorCode.TENANT_NOT_FOUND

    def __init__(self, tenant: str) -> None:
        super().__init__(f"tenant '{tenant}' does not exist in storage", details={"tenant": tenant})


class ConfigInvalid(AisleError):
    """A tenant configuration file is missing or does not validate."""

    # 503: the tenant is unusable until an operator fixes the file; not the caller's fault
    code = ErrorCode.TENANT_CONFIG_INVALID

    def __init__(self, tenant: str, file: str, problem: str, field: str | None = None) -> None:
        where = f"{tenant}/{file}" + (f" field '{field}'" if field else "")
        super().__init__(f"{where}: {problem}", details={"tenant": tenant, "file": file, "field": field})
        self.tenant, self.file, self.field = tenant, file, field
