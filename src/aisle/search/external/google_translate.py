"""Aisle's search, suggestion and photo requests as Google Cloud Retail / Vision messages, and back.

Request and response shapes: ``google.cloud.retail.v2`` ``SearchRequest`` / ``SearchResponse`` and
``CompleteQueryRequest`` / ``CompleteQueryResponse``; ``google.cloud.vision.v1``
``AnnotateImageRequest`` with ``ProductSearchParams`` (Retail v2 has no image search). Filters, facets
and sort go through :mod:`aisle.search.external.google_filter`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from google.cloud import retail_v2, vision_v1

from aisle.search.external.google_filter import retail_filter, retail_key, retail_order_by
from aisle.search.model import FacetValue, FilterSpec, SortOrder
from aisle.search.query.labels import range_label

MAX_PAGE_SIZE = 120
"""Retail coerces a larger ``pageSize`` to 120 (SearchRequest.page_size)."""

DEFAULT_PRICE_INTERVALS: tuple[tuple[float | None, float | None], ...] = (
    (None, 25.0),
    (25.0, 50.0),
    (50.0, 100.0),
    (100.0, 250.0),
    (250.0, None),
)
"""Buckets of a number facet when the tenant configures no ``price_ranges`` (Retail needs intervals)."""

Intervals = Sequence[tuple[float | None, float | None]]


@dataclass(frozen=True)
class RetailPage:
    """What Aisle keeps of one SearchResponse: ids in answer order and the response's signals."""

    ids: list[str]
    total: int
    facets: dict[str, list[FacetValue]] = field(default_factory=dict)
    corrected_query: str | None = None
    attribution_token: str | None = None
    redirect_uri: str | None = None
    next_page_token: str | None = None
    expanded: bool = False


def _interval(lo: float | None, hi: float | None) -> retail_v2.Interval:
    # Aisle's buckets are [from, to): Retail's minimum is inclusive, exclusive_maximum exclusive.
    interval = retail_v2.Interval()
    if lo is not None:
        interval.minimum = lo
    if hi is not None:
        interval.exclusive_maximum = hi
    return interval


def facet_specs(
    facets: Sequence[str],
    field_map: Mapping[str, str] | None = None,
    *,
    numeric: frozenset[str] = frozenset({"price"}),
    intervals: Intervals = DEFAULT_PRICE_INTERVALS,
    limit: int = 30,
) -> list[retail_v2.SearchRequest.FacetSpec]:
    """One FacetSpec per Aisle facet name; number facets (``numeric``) bucketed into ``intervals``."""
    specs = []
    for name in facets:
        key = retail_v2.SearchRequest.FacetSpec.FacetKey(key=retail_key(name, field_map))
        if name in numeric:
            key.intervals = [_interval(lo, hi) for lo, hi in intervals]
        specs.append(retail_v2.SearchRequest.FacetSpec(facet_key=key, limit=limit))
    return specs


def search_request(
    placement: str,
    query: str,
    *,
    filters: Sequence[FilterSpec] = (),
    facets: Sequence[str] = (),
    sort: SortOrder = "relevance",
    size: int = 20,
    offset: int = 0,
    visitor_id: str | None = None,
    field_map: Mapping[str, str] | None = None,
    intervals: Intervals = DEFAULT_PRICE_INTERVALS,
    spell_correction: bool = True,
    query_expansion: bool = True,
) -> retail_v2.SearchRequest:
    """The Retail SearchRequest for one Aisle search.

    ``placement``: the serving config's full name. ``size`` is capped at :data:`MAX_PAGE_SIZE`.
    ``visitor_id`` is required by Retail: a request without one sends ``"anonymous"``. Spell
    correction ``AUTO`` searches the corrected query (``correctedQuery`` says so); query expansion
    ``AUTO`` lets Retail widen a query that finds little. An empty query is Retail's category browsing:
    the category filter's paths go in ``pageCategories`` too.

    Raises:
        BadRequest (``filter_not_allowed`` / ``filter_value_invalid``): see :mod:`google_filter`.
    """
    Spec = retail_v2.SearchRequest
    return Spec(
        placement=placement,
        query=query,
        page_categories=page_categories(query, filters),
        visitor_id=visitor_id or "anonymous",
        page_size=max(1, min(size, MAX_PAGE_SIZE)),
        offset=offset,
        filter=retail_filter(filters, field_map),
        order_by=retail_order_by(sort, field_map),
        facet_specs=facet_specs(facets, field_map, intervals=intervals),
        spell_correction_spec=Spec.SpellCorrectionSpec(
            mode=Spec.SpellCorrectionSpec.Mode.AUTO
            if spell_correction
            else Spec.SpellCorrectionSpec.Mode.SUGGESTION_ONLY
        ),
        query_expansion_spec=Spec.QueryExpansionSpec(
            condition=Spec.QueryExpansionSpec.Condition.AUTO
            if query_expansion
            else Spec.QueryExpansionSpec.Condition.DISABLED
        ),
    )


def page_categories(query: str, filters: Sequence[FilterSpec]) -> list[str]:
    """``pageCategories`` of a browse (empty query): the ``category`` filter's paths (``A > B``)."""
    if query.strip():
        return []
    out: list[str] = []
    for spec in filters:
        if spec.field == "category":
            values = spec.value if isinstance(spec.value, list) else [spec.value]
            out.extend(v for v in values if isinstance(v, str))
    return out


def _facet_label(value: retail_v2.SearchResponse.Facet.FacetValue) -> str:
    if "interval" in value:
        iv = value.interval
        lo = iv.minimum if "minimum" in iv else (iv.exclusive_minimum if "exclusive_minimum" in iv else None)
        hi = iv.maximum if "maximum" in iv else (iv.exclusive_maximum if "exclusive_maximum" in iv else None)
        return range_label(lo, hi)
    return value.value


def search_page(
    response: retail_v2.SearchResponse, facets: Sequence[str], field_map: Mapping[str, str] | None = None
) -> RetailPage:
    """Ids, total, facets (under Aisle's names, empty buckets dropped) and signals of a SearchResponse."""
    names = {retail_key(name, field_map): name for name in facets}
    out: dict[str, list[FacetValue]] = {name: [] for name in facets}
    for facet in response.facets:
        name = names.get(facet.key)
        if name is not None:
            out[name] = [
                FacetValue(value=_facet_label(v), count=int(v.count)) for v in facet.values if v.count
            ]
    return RetailPage(
        ids=[r.id or r.product.name.rsplit("/", 1)[-1] for r in response.results],
        total=int(response.total_size),
        facets=out,
        corrected_query=response.corrected_query or None,
        attribution_token=response.attribution_token or None,
        redirect_uri=response.redirect_uri or None,
        next_page_token=response.next_page_token or None,
        expanded=bool(response.query_expansion_info.expanded_query),
    )


def complete_request(
    catalog: str, prefix: str, *, size: int, visitor_id: str | None
) -> retail_v2.CompleteQueryRequest:
    """CompleteQueryRequest for ``prefix`` (``catalog``: the catalog's full name; at most 20)."""
    return retail_v2.CompleteQueryRequest(
        catalog=catalog, query=prefix, max_suggestions=max(1, min(size, 20)), visitor_id=visitor_id or ""
    )


def vision_filter(filters: Sequence[FilterSpec]) -> str:
    """Aisle's text filters as a Vision Product Search label filter (``color = red AND (brand = a OR
    brand = b)``); label values cannot hold ``=``, quotes, ``(`` or ``)`` (those filters are dropped)."""
    groups = []
    for spec in filters:
        values = spec.value if isinstance(spec.value, list) else [spec.value]
        if isinstance(spec.value, dict) or not all(isinstance(v, str) for v in values):
            continue
        ok = [v for v in values if isinstance(v, str) and not set(v) & set('=()"') and " OR " not in v]
        if len(ok) != len(values):
            continue
        terms = [f"{spec.field} = {v}" for v in ok]
        groups.append(terms[0] if len(terms) == 1 else "(" + " OR ".join(terms) + ")")
    return " AND ".join(groups)


def annotate_request(
    data: bytes,
    *,
    product_set: str,
    categories: Sequence[str],
    size: int,
    label_filter: str = "",
) -> vision_v1.AnnotateImageRequest:
    """One PRODUCT_SEARCH AnnotateImageRequest for the photo ``data`` (JPEG or PNG bytes)."""
    return vision_v1.AnnotateImageRequest(
        image=vision_v1.Image(content=data),
        features=[vision_v1.Feature(type_=vision_v1.Feature.Type.PRODUCT_SEARCH, max_results=size)],
        image_context=vision_v1.ImageContext(
            product_search_params=vision_v1.ProductSearchParams(
                product_set=product_set, product_categories=list(categories), filter=label_filter
            )
        ),
    )


def image_matches(response: vision_v1.AnnotateImageResponse) -> list[tuple[str, float]]:
    """(product id, score in [0, 1]) of a Product Search answer, best first (ids: the last part of
    each product's resource name, ``projects/P/locations/L/products/ID``)."""
    results = response.product_search_results.results
    return [(r.product.name.rsplit("/", 1)[-1], float(r.score)) for r in results]
