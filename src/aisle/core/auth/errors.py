"""Authentication errors.

Resource servers (every service) raise :class:`AisleError` subclasses rendered in the standard envelope,
with the ``WWW-Authenticate`` challenge of RFC 6750 section 3:

* 401 ``unauthorized``: no bearer token at all (section 3.1: no error attribute in the challenge);
* 401 ``invalid_token``: malformed, oversized, forged, expired, wrong audience or unknown key;
* 403 ``insufficient_scope``: the token lacks the endpoint's scope;
* 403 ``tenant_forbidden``: the token's tenants do not include the request's tenant.

The token endpoint answers in the RFC 6749 section 5.2 form instead (:class:`OAuthError`).
"""

from __future__ import annotations

from aisle.core.errors import AisleError, ErrorCode

REALM = "aisle"


def _challenge(error: str | None = None, description: str | None = None, scope: str | None = None) -> str:
    """A ``WWW-Authenticate: Bearer`` value (RFC 6750 section 3); quotes and backslashes are dropped."""
    parts = [f'realm="{REALM}"']
    for name, value in (("error", error), ("error_description", description), ("scope", scope)):
        if value:
            clean = "".join(c for c in value if c not in '"\\' and 0x20 <= ord(c) < 0x7F)
            parts.append(f'{name}="{clean}"')
    return "Bearer " + ", ".join(parts)


class Unauthorized(AisleError):
    """401: the request carries no bearer token."""

    code = ErrorCode.UNAUTHORIZED

    def __init__(self, message: str = "a bearer token is required (Authorization: Bearer <token>)") -> None:
        super().__init__(message, headers={"WWW-Authenticate": _challenge()})


class InvalidToken(AisleError):
    """401: the token is malformed, forged, expired, for another audience or signed by an unknown key."""

    code = ErrorCode.INVALID_TOKEN

    def __init__(self, message: str) -> None:
        super().__init__(message, headers={"WWW-Authenticate": _challenge("invalid_token", message)})


class InsufficientScope(AisleError):
    """403: the token lacks the scope the endpoint requires."""

    code = ErrorCode.INSUFFICIENT_SCOPE

    def __init__(self, scope: str) -> None:
        message = f"the token lacks the scope '{scope}' this endpoint requires"
        super().__init__(
            message,
            details={"scope": scope},
            headers={"WWW-Authenticate": _challenge("insufficient_scope", message, scope)},
        )


class TenantForbidden(AisleError):
    """403: the token is not valid for the request's tenant."""

    code = ErrorCode.TENANT_FORBIDDEN

    def __init__(self, tenant: str) -> None:
        tenant = tenant[:80]  # the value comes from the request: bound what is echoed back
        message = f"the token is not valid for tenant '{tenant}'"
        super().__init__(
            message,
            details={"tenant": tenant},
            headers={"WWW-Authenticate": _challenge("insufficient_scope", message)},
        )


class OAuthError(Exception):
    """An RFC 6749 section 5.2 error response from the token endpoint.

    Args:
        error: ``invalid_request``, ``invalid_grant``, ``unsupported_grant_type``,
            ``invalid_scope`` or ``temporarily_unavailable`` (catalogued in :class:`ErrorCode`).
        description: human-readable ``error_description`` (ASCII, section 5.2).
        status: the catalogue's for ``error`` (400) unless given.
    """

    def __init__(self, error: ErrorCode | str, description: str, status: int | None = None) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        known = ErrorCode.lookup(error)
        self.status = status if status is not None else known.status if known is not None else 400

    def to_dict(self) -> dict[str, str]:
        return {"error": str(self.error), "error_description": self.description}


def invalid_request(description: str) -> OAuthError:
    return OAuthError(ErrorCode.INVALID_REQUEST, description)


def invalid_grant(description: str) -> OAuthError:
    """RFC 7523 section 3.1: any invalid assertion is answered with ``invalid_grant``."""
    return OAuthError(ErrorCode.INVALID_GRANT, description)
