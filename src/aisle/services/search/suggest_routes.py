"""``GET /suggestions`` (interface spec, "Search service"): ranked autocomplete suggestions.

The suggestion indexes live in the engine's :class:`~aisle.search.suggest.registry.SuggesterRegistry`:
built on a tenant's first request (seconds; cached on local disk after), rebuilt when the catalog,
the query log or the configuration changes. A warm request is answered on the event loop
(a dictionary lookup and 0.1-1 ms of numpy, like the predict service's warm path); the first build
runs in the thread pool, checks for changes in a background thread.
"""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.validation import NOT_BLANK_PATTERN
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TENANT_PATTERN
from aisle.services.common.search_schemas import SuggestionItem
from aisle.services.search.state import Engine

router = APIRouter()


@router.get(
    "/suggestions",
    response_model=list[SuggestionItem],
    dependencies=[scoped(SEARCH_READ, tenant_default="default")],
    responses=error_responses(401, 403, 404, 422),
    summary="Ranked autocomplete suggestions by query prefix",
)
async def suggestions(
    engine: Engine,
    qStr: Annotated[  # the spec's parameter name
        str,
        Query(
            max_length=128,
            pattern=NOT_BLANK_PATTERN,
            description="What the shopper has typed so far; must not be blank. Every word is matched "
            "as a prefix of a word ('run sho' finds 'running shoes'), with typo tolerance.",
            examples=["nik"],
        ),
    ],
    tenant: Annotated[str, Query(pattern=TENANT_PATTERN, description="Tenant identifier.")] = "default",
    limit: Annotated[
        int | None,
        Query(ge=1, le=50, description="At most this many (default and ceiling: max_suggestions)."),
    ] = None,
) -> Response:
    """Suggestions from the tenant's query log, brands, categories and product names, ranked by
    popularity and the per-type boosts and limits of ``autocomplete_configuration.json``; no
    duplicates, and each one returns results when searched. A blank ``qStr`` is a 422
    ``validation_error``; an unknown tenant a 404 ``tenant_not_found``."""
    suggester = engine.suggesters.ready(tenant)
    if suggester is None:  # first request: configuration checks and a build, off the event loop
        suggester = await run_in_threadpool(engine.suggesters.get, tenant)
    found = suggester.suggest(qStr, limit)  # about 0.1-1 ms of numpy: answered inline
    body = [{"suggestion": s.suggestion, "type": s.type} for s in found]
    return Response(orjson.dumps(body), media_type="application/json")
