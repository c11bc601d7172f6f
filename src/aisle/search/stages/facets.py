"""Facet counts over the whole match set (tantivy aggregations on fast fields).

* keyword attributes: value counts (``terms``), most frequent first, at most :data:`FACET_SIZE`;
* category paths: counts at the level below the deepest category filter (level 0 without one);
* the price: counts in range buckets (``global_configuration.price_ranges``, else rounded catalog
  quantiles), labelled ``"500-1000"``, ``"5000+"``;
* integers and booleans: value counts.

Errors: unknown name → 400 ``facet_unknown``; attribute not facetable → 400 ``facet_not_allowed``.
"""

from __future__ import annotations

from typing import Any

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenant_config import AttributeRole, AttributeType
from aisle.search.context import SearchContext
from aisle.search.index.schema import MAX_CATEGORY_LEVELS, level_field, numeric_field
from aisle.search.query.labels import number_label, range_label

FACET_SIZE = 30


def facet_aggregations(ctx: SearchContext) -> dict[str, dict[str, Any]]:
    """The tantivy aggregation request for ``ctx.query.facets``. Raises BadRequest (module docstring)."""
    index = ctx.index
    aggs: dict[str, dict[str, Any]] = {}
    for name in ctx.query.facets:
        attr = index.attribute(name)
        if attr is None:
            raise BadRequest(
                f"facet '{name}' is not an attribute of this tenant",
                code=ErrorCode.FACET_UNKNOWN,
                details={"facet": name},
            )
        if not attr.facetable:
            raise BadRequest(
                f"attribute '{name}' is not facetable",
                code=ErrorCode.FACET_NOT_ALLOWED,
                details={"facet": name},
            )
        if attr.type is AttributeType.category_path:
            level = min(ctx.retrieval.category_level.get(name, 0), MAX_CATEGORY_LEVELS - 1)
            aggs[name] = {"terms": {"field": level_field(attr, level), "size": FACET_SIZE}}
        elif attr.type is AttributeType.keyword:
            aggs[name] = {"terms": {"field": f"k_{name}", "size": FACET_SIZE}}
        elif attr.type is AttributeType.number or (attr.role is AttributeRole.price):
            configured = ctx.config.global_.price_ranges
            ranges = [(r.start, r.end) for r in configured] if configured else index.price_ranges
            spec = []
            for lo, hi in ranges:
                bucket: dict[str, float] = {}
                if lo is not None:
                    bucket["from"] = lo
                if hi is not None:
                    bucket["to"] = hi
                spec.append(bucket)
            aggs[name] = {"range": {"field": numeric_field(attr), "ranges": spec or [{}]}}
        elif attr.type is AttributeType.integer:
            aggs[name] = {"terms": {"field": numeric_field(attr), "size": FACET_SIZE}}
        elif attr.type is AttributeType.boolean:
            aggs[name] = {"terms": {"field": f"b_{name}", "size": 2}}
        else:
            raise BadRequest(f"attribute '{name}' is not facetable", code=ErrorCode.FACET_NOT_ALLOWED)
    return aggs


class Facets:
    """Fills ``ctx.output.facet_counts`` for the requested facets over ``ctx.retrieval.match_query``."""

    def run(self, ctx: SearchContext) -> SearchContext:
        if not ctx.query.facets:
            return ctx
        aggs = facet_aggregations(ctx)
        if ctx.retrieval.match_query is None or ctx.output.total == 0:
            ctx.output.facet_counts = {name: [] for name in aggs}
            return ctx
        match, lean = ctx.retrieval.match_query, ctx.retrieval.lean_match
        # retrieval's lean query while no later stage replaced the match query (same products, cheaper)
        counted = lean[1] if lean is not None and lean[0] is match else match
        result = ctx.index.searcher.aggregate(counted, aggs)
        for name, spec in aggs.items():
            buckets = result.get(name, {}).get("buckets", [])
            if "range" in spec:
                values = [
                    (range_label(b.get("from"), b.get("to")), int(b["doc_count"]))
                    for b in buckets
                    if b["doc_count"]
                ]
            else:
                values = [(_key(b["key"]), int(b["doc_count"])) for b in buckets if b["doc_count"]]
            ctx.output.facet_counts[name] = values
        return ctx


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return number_label(key)
    return str(key)
