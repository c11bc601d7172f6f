"""Errors of external retail search backends, each with its catalogued code and HTTP status.

A backend translates its transport's failures into these (and only these); the proxy service renders
them as they are, the fallback stage counts ``counts_as_failure`` ones against the tenant's circuit
breaker and records the code in ``queryGraph``.

=================================  ==================================  ======
error                              code                                status
=================================  ==================================  ======
ExternalSearchNotConfigured        ``external_search_not_configured``  409
ExternalSearchUnsupported          ``external_search_unsupported``     409
ExternalSearchRejected             ``external_search_rejected``        400
ExternalSearchUnavailable          ``external_search_unavailable``     502
ExternalSearchAuthFailed           ``external_search_auth_failed``     502
ExternalSearchRateLimited          ``external_search_rate_limited``    503
ExternalSearchTimeout              ``external_search_timeout``         504
=================================  ==================================  ======
"""

from __future__ import annotations

from aisle.core.errors import AisleError, ErrorCode


class ExternalSearchError(AisleError):
    """Base of the backend errors. ``counts_as_failure``: whether the service itself failed (the
    circuit breaker counts it), as opposed to a request it refused or an operation it lacks."""

    code: str = ErrorCode.EXTERNAL_SEARCH_UNAVAILABLE
    counts_as_failure: bool = True


class ExternalSearchNotConfigured(ExternalSearchError):
    """The tenant's ``crs_config.json`` enables no backend (or names one this build lacks)."""

    code = ErrorCode.EXTERNAL_SEARCH_NOT_CONFIGURED
    counts_as_failure = False


class ExternalSearchUnsupported(ExternalSearchError):
    """The backend does not offer the operation (image search on Typesense)."""

    code = ErrorCode.EXTERNAL_SEARCH_UNSUPPORTED
    counts_as_failure = False


class ExternalSearchRejected(ExternalSearchError):
    """The backend refused the request as invalid (its 400/404/422)."""

    code = ErrorCode.EXTERNAL_SEARCH_REJECTED
    counts_as_failure = False


class ExternalSearchUnavailable(ExternalSearchError):
    """Connection refused or reset, a 5xx, an unreadable answer, or the circuit breaker open."""

    code = ErrorCode.EXTERNAL_SEARCH_UNAVAILABLE


class ExternalSearchAuthFailed(ExternalSearchError):
    """The backend refused the credentials (its 401/403), or the secret reference could not be read."""

    code = ErrorCode.EXTERNAL_SEARCH_AUTH_FAILED


class ExternalSearchRateLimited(ExternalSearchError):
    """The backend answered 429 (quota or rate limit)."""

    code = ErrorCode.EXTERNAL_SEARCH_RATE_LIMITED


class ExternalSearchTimeout(ExternalSearchError):
    """No answer within the call's ``timeout_s``."""

    code = ErrorCode.EXTERNAL_SEARCH_TIMEOUT


def error_for_status(status: int, message: str) -> ExternalSearchError:
    """The error for a backend's HTTP ``status`` (a 2xx is not an error: callers do not pass one)."""
    if status in (401, 403):
        return ExternalSearchAuthFailed(message)
    if status == 429:
        return ExternalSearchRateLimited(message)
    if status in (408, 504):
        return ExternalSearchTimeout(message)
    if 400 <= status < 500:
        return ExternalSearchRejected(message)
    return ExternalSearchUnavailable(message)
