"""External results in Aisle's search response shape, products hydrated from the tenant's catalog."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from aisle.search.external.protocol import ExternalProduct, ExternalResult
from aisle.search.index.reader import TenantIndex
from aisle.search.model import ExternalSearchGraph, FacetValue, QueryGraph, SearchResult


def hydrate(products: list[ExternalProduct], index: TenantIndex | None) -> list[dict[str, Any]]:
    """Aisle product dicts (``id``, the attributes, ``score``) for external results, in their order.

    A product the backend returned with ``fields`` keeps them (it may be one Aisle does not have); one
    returned as an id only takes the tenant catalog's row, and is dropped when the catalog (``index``,
    None when the tenant has none) lacks it. Ids repeated by the backend appear once.
    """
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for product in products:
        if product.id in seen:
            continue
        if product.fields is not None:
            row = {**product.fields, "id": product.id}
        else:
            ord_ = index.ord_by_id.get(product.id) if index is not None else None
            if ord_ is None:
                continue
            row = index.rows[ord_] if index is not None else {}  # a new dict per read
        row["score"] = round(product.score, 4) if product.score is not None else None
        seen.add(product.id)
        out.append(row)
    return out


def external_search_result(
    result: ExternalResult, index: TenantIndex | None, query: str, *, took_ms: float | None = None
) -> SearchResult:
    """The proxy service's answer: the external page as a search response, ``queryGraph.external``
    saying it came from the backend (reason ``proxy``, with the backend's own attribution token);
    ``redirect`` and ``correctedQuery`` carried over."""
    products = hydrate(result.products, index)
    graph = QueryGraph(
        original=query,
        normalized=query,
        external=ExternalSearchGraph(
            status="answered",
            reason="proxy",
            backend=result.backend,
            products=len(products),
            total=result.total,
            took_ms=took_ms,
            attribution_token=result.attribution_token,
        ),
        took_ms=took_ms or 0.0,
    )
    return SearchResult(
        products=products,
        total=result.total,
        facets=result.facets,
        queryGraph=graph,
        redirect=result.redirect_uri,
        correctedQuery=result.corrected_query,
    )


@dataclass(frozen=True)
class ExternalPage:
    """The fallback's external products (hydrated) for one search, and how they join Aisle's own:
    ``replace`` stands them in for Aisle's page, total and facets; ``append`` adds them after Aisle's
    products on the page, without those Aisle returned, up to the page ``size``."""

    merge: Literal["replace", "append"]
    products: list[dict[str, Any]]
    total: int
    facets: dict[str, list[FacetValue]] = field(default_factory=dict)
    corrected_query: str | None = None
    redirect_uri: str | None = None

    def merged(
        self, own: list[dict[str, Any]], own_total: int, own_facets: dict[str, list[FacetValue]], size: int
    ) -> tuple[list[dict[str, Any]], int, dict[str, list[FacetValue]]]:
        """(products, total, facets) of the response."""
        if self.merge == "replace":
            return self.products[:size], self.total, self.facets
        seen = {p.get("id") for p in own}
        extra = [p for p in self.products if p.get("id") not in seen]
        room = max(size - len(own), 0)
        dropped = len(self.products) - len(extra)
        return own + extra[:room], own_total + max(self.total - dropped, 0), own_facets
