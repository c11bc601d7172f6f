"""HTTP routes of the search service: parse, call the engine, shape the response."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Path, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.routing import APIRoute
from pydantic import ValidationError

from aisle.core.auth.dependencies import Principal
from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.stock import STORE_ID_PATTERN
from aisle.search import browse
from aisle.search.model import FilterSpec, SearchResult, SortOrder
from aisle.search.query import SearchQuery
from aisle.services.common.auth import require_scope, scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.metrics import count_tenant
from aisle.services.common.params import TenantQuery
from aisle.services.search.schemas import (
    CategoriesRequest,
    CategoriesResponse,
    CategoryCount,
    CategoryLevel,
    CategoryLevelsRequest,
    CategoryLevelsResponse,
    CategoryNode,
    ItemsPage,
    SearchRequest,
    TenantList,
)
from aisle.services.search.state import Engine, State

router = APIRouter()
read = scoped(SEARCH_READ)
require_read = require_scope(SEARCH_READ)


def _json(model: Any) -> Response:
    return Response(orjson.dumps(model.model_dump(by_alias=True)), media_type="application/json")


def parse_filters(raw: list[str]) -> list[FilterSpec]:
    """``field:value`` query parameters; a repeated field is an OR; ``price:10..50`` is a range."""
    grouped: dict[str, list[str]] = {}
    for item in raw:
        field, sep, value = item.partition(":")
        if not sep or not field or not value:
            raise BadRequest(f"filter '{item}' must look like field:value", code=ErrorCode.FILTER_INVALID)
        grouped.setdefault(field, []).append(value)
    specs = []
    for field, values in grouped.items():
        if len(values) == 1 and ".." in values[0]:
            lo, _, hi = values[0].partition("..")
            try:
                rng = {**({"gte": float(lo)} if lo else {}), **({"lte": float(hi)} if hi else {})}
            except ValueError as exc:
                raise BadRequest(
                    f"range '{values[0]}' must be numbers, e.g. 10..50", code=ErrorCode.FILTER_INVALID
                ) from exc
            specs.append(_spec(field, rng))
        else:
            parsed: list[str | float] = []
            for v in values:
                try:
                    parsed.append(float(v) if v.replace(".", "", 1).isdigit() else v)
                except ValueError:
                    parsed.append(v)
            specs.append(_spec(field, parsed if len(parsed) > 1 else parsed[0]))
    return specs


def _spec(field: str, value: Any) -> FilterSpec:
    """A FilterSpec from a parsed ``filter=`` parameter; a value it refuses is a 400 ``filter_invalid``."""
    try:
        return FilterSpec(field=field, value=value)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"] if exc.errors() else "invalid"
        raise BadRequest(f"filter '{field}': {problem}", code=ErrorCode.FILTER_INVALID) from None


def search_request_of(
    *,
    tenant: str | None,
    q: str | None = None,
    query: str | None = None,
    size: int | str = 20,
    from_: int | str = 0,
    sort: str = "relevance",
    facets: str = "",
    filter: list[str] | None = None,
    visitor_id: str | None = None,
    store_id: str | None = None,
    prefix: bool | str = False,
    ignore_understood: str = "",
    follow_up: bool | str = True,
) -> SearchRequest:
    """``GET /search``'s query parameters as the body of ``POST /search``: the one parser of them (the
    route and its fast lane both call it).

    Raises:
        BadRequest: ``bad_request`` when ``q`` and ``query`` differ; ``filter_invalid`` (see
            :func:`parse_filters`).
        RequestValidationError: a value the body refuses (a 422 naming the parameter, as for POST).
    """
    if q is not None and query is not None and q != query:
        raise BadRequest("give the query once: 'q' and 'query' differ", code=ErrorCode.BAD_REQUEST)
    fields = {
        "query": q if q is not None else (query or ""),
        "tenant": tenant,
        "size": size,
        "from": from_,
        "sort": sort,
        "facets": [f for f in facets.split(",") if f],
        "filters": parse_filters(filter or []),
        "visitorId": visitor_id,
        "storeId": store_id,
        "prefix": prefix,
        "ignoreUnderstood": [f for f in ignore_understood.split(",") if f],
        "followUp": follow_up,
    }
    try:
        return SearchRequest.model_validate(fields)
    except ValidationError as exc:  # e.g. too many facets: a 422 naming the parameter, as for POST
        raise RequestValidationError(exc.errors(include_url=False)) from None


@router.post(
    "/search",
    response_model=SearchResult,
    dependencies=[read, count_tenant("search")],
    responses=error_responses(400, 401, 403, 404, 422),
    summary="Full multi-stage search",
)
async def search(state: State, body: SearchRequest) -> Response:
    """Query understanding, staged BM25 retrieval (strict → relaxed → typo), filters, facets, sort.

    The answer carries an ``attributionToken``: send it with the shopper's clicks and purchases."""
    return await state.respond(body)


VisitorIdQuery = Annotated[
    str | None,
    Query(
        alias="visitorId",
        max_length=128,
        description="The shopper's visitor id: assigns A/B experiment variants, and goes to the "
        "tenant's external search service.",
    ),
]
StoreIdQuery = Annotated[
    str | None,
    Query(
        alias="storeId",
        pattern=STORE_ID_PATTERN,
        description="The shopper's store: filters or boosts by its inventory (the stock setting).",
    ),
]
PrefixQuery = Annotated[
    bool, Query(description="Search as you type: the last word also matches the words beginning with it.")
]
FollowUpQuery = Annotated[
    bool, Query(alias="followUp", description="false: ask no guided-search question (default true).")
]
IgnoreUnderstoodQuery = Annotated[
    str,
    Query(
        alias="ignoreUnderstood",
        max_length=1024,
        description="Comma-separated attributes the query's words name not to filter or boost by.",
    ),
]


@router.get(
    "/search",
    response_model=SearchResult,
    dependencies=[read, count_tenant("search")],
    responses=error_responses(400, 401, 403, 404, 422),
    summary="Search with query parameters",
)
async def search_get(
    state: State,
    tenant: TenantQuery,
    q: Annotated[str | None, Query(max_length=512, description="The shopper's query.")] = None,
    query: Annotated[str | None, Query(max_length=512, description="Same as `q`.")] = None,
    size: Annotated[int, Query(ge=0, le=100)] = 20,
    from_: Annotated[int, Query(alias="from", ge=0, le=10_000)] = 0,
    sort: SortOrder = "relevance",
    facets: Annotated[str, Query(max_length=1024, description="Comma-separated facet names.")] = "",
    filter: Annotated[list[str], Query(description="field:value (repeat for OR); price:10..50")] = [],  # noqa: B006
    visitor_id: VisitorIdQuery = None,
    store_id: StoreIdQuery = None,
    prefix: PrefixQuery = False,
    ignore_understood: IgnoreUnderstoodQuery = "",
    follow_up: FollowUpQuery = True,
) -> Response:
    """``POST /search`` for links and quick checks: ``q`` (or ``query``), paging, sort, facets, filters.

    Giving both ``q`` and ``query`` with different values is a 400 (``bad_request``).
    """
    body = search_request_of(
        tenant=tenant,
        q=q,
        query=query,
        size=size,
        from_=from_,
        sort=sort,
        facets=facets,
        filter=filter,
        visitor_id=visitor_id,
        store_id=store_id,
        prefix=prefix,
        ignore_understood=ignore_understood,
        follow_up=follow_up,
    )
    return await state.respond(body)


def search_get_route() -> APIRoute:
    """The ``GET /search`` route of this router (the fast lane's declared parameters and metrics name)."""
    return _search_route("GET")


def search_post_route() -> APIRoute:
    """The ``POST /search`` route of this router (the fast lane's metrics name for it)."""
    return _search_route("POST")


def _search_route(method: str) -> APIRoute:
    for route in router.routes:
        if isinstance(route, APIRoute) and route.path == "/search" and method in (route.methods or ()):
            return route
    raise LookupError(f"{method} /search is not declared")  # pragma: no cover - declared above


@router.get("/items", response_model=ItemsPage, dependencies=[read], responses=error_responses(400, 404, 422))
def items(
    engine: Engine,
    tenant: TenantQuery,
    size: Annotated[int, Query(ge=0, le=100)] = 20,
    from_: Annotated[int, Query(alias="from", ge=0, le=1_000_000)] = 0,
    filter: Annotated[list[str], Query(description="field:value (repeat for OR); price:10..50")] = [],  # noqa: B006
) -> Response:
    """Catalog products in catalog order, paged, optionally filtered."""
    products, total = engine.items(tenant, parse_filters(filter), from_, size)
    return _json(ItemsPage(items=products, total=total, **{"from": from_}, size=size))


@router.get("/item/{product_id}", dependencies=[read], responses=error_responses(404, 422))
def item(
    engine: Engine, tenant: TenantQuery, product_id: Annotated[str, Path(max_length=256)]
) -> dict[str, Any]:
    """One product by id (404 ``product_not_found``)."""
    return engine.item(tenant, product_id)


@router.post(
    "/categories",
    response_model=CategoriesResponse,
    dependencies=[read],
    responses=error_responses(400, 404, 422),
)
def categories(engine: Engine, body: CategoriesRequest) -> CategoriesResponse:
    """Children of ``parent`` (top level without one) with product counts, optionally within a query."""
    counted = SearchQuery(text=body.query or "", size=0, filters=body.filters)
    found = engine.categories(body.tenant, body.field, body.parent, counted)
    return CategoriesResponse(
        field=found.field,
        parent=body.parent,
        categories=[CategoryCount(name=n, path=p, count=c) for n, p, c in found.children],
    )


@router.post(
    "/categories/levels",
    response_model=CategoryLevelsResponse,
    dependencies=[read],
    responses=error_responses(400, 404, 422),
)
def category_levels(engine: Engine, body: CategoryLevelsRequest) -> CategoryLevelsResponse:
    """The category tree, level by level and nested, with product counts."""
    field, levels, roots = engine.category_levels(body.tenant, body.field, body.depth)

    def node(n: browse.Node) -> CategoryNode:
        return CategoryNode(name=n.name, path=n.path, count=n.count, children=[node(c) for c in n.children])

    return CategoryLevelsResponse(
        field=field,
        levels=[
            CategoryLevel(level=i, values=[{"value": v, "count": c} for v, c in values])  # type: ignore[misc]
            for i, values in enumerate(levels)
        ],
        tree=[node(r) for r in roots],
    )


@router.get("/tenants", response_model=TenantList)
def tenants(engine: Engine, principal: Annotated[Principal | None, Depends(require_read)]) -> TenantList:
    """Tenant identifiers found in object storage (with auth on: those the token may use)."""
    names = engine.tenants.names()
    if principal is not None:
        names = [n for n in names if n in principal.tenants]
    return TenantList(tenants=names)
