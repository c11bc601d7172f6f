"""Access-token scopes and the endpoints that need them.

A token carries its scopes space-separated in the ``scope`` claim (RFC 9068 section 2.2.3, RFC 6749
section 3.3). Each protected endpoint asks for exactly one scope:

===============  ==========================================================================================
scope            endpoints
===============  ==========================================================================================
search:read      search service: POST/GET /search, POST /vector-search, POST /images/search, GET /items,
                 GET /item/{id}, GET /suggestions, POST /categories, POST /categories/levels, GET /tenants;
                 the catalog-search proxy and the vector search service
recs:read        predict service: POST /predict, POST /evaluation, GET /bundles,
                 POST /bundles/recommendations; search service: POST /recommendations;
                 edit service reads: GET /models, /models/{id}, /jobs/{id}, /containers, /containers/{id},
                 GET /events, /events/types
recs:write       edit service writes: POST /models/{id}/deploy, /models/{id}/undeploy, POST/PUT/DELETE
                 /containers, POST /events, POST /user_features
rules:write      rule management service: every endpoint that creates, changes or deletes a rule
catalog:read     search service: the product API's reads (GET /products/{id} and its change history)
catalog:write    search service: product writes (PUT, PATCH, DELETE /products/{id}, POST /products/batch,
                 POST /catalog/import); the vector search service's writes; index (re)builds
admin            tenant administration: PUT /tenants/{tenant} (a new tenant from a catalog file)
analytics:read   analytics service: every GET /analytics/... report
===============  ==========================================================================================

``GET /health``, ``/docs`` and ``/openapi.json`` need no token.
"""

from __future__ import annotations

from aisle.core.errors import BadRequest, ErrorCode

SEARCH_READ = "search:read"
RECS_READ = "recs:read"
RECS_WRITE = "recs:write"
RULES_WRITE = "rules:write"
CATALOG_READ = "catalog:read"
CATALOG_WRITE = "catalog:write"
ADMIN = "admin"
ANALYTICS_READ = "analytics:read"

SCOPES: tuple[str, ...] = (
    SEARCH_READ, RECS_READ, RECS_WRITE, RULES_WRITE, CATALOG_READ, CATALOG_WRITE, ADMIN, ANALYTICS_READ,
)  # fmt: skip


def check_scopes(scopes: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Return ``scopes`` de-duplicated in :data:`SCOPES` order.

    Raises:
        BadRequest (``scope_unknown``): a name not in :data:`SCOPES`.
    """
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise BadRequest(
            f"unknown scope(s) {', '.join(unknown)}; known: {', '.join(SCOPES)}", code=ErrorCode.SCOPE_UNKNOWN
        )
    return tuple(s for s in SCOPES if s in scopes)


def parse_scope_param(value: str) -> tuple[str, ...]:
    """Split an RFC 6749 section 3.3 ``scope`` string (space-delimited) into names, order kept."""
    return tuple(dict.fromkeys(p for p in value.split(" ") if p))
