"""Facet counts over the whole match set (tantivy aggregations on fast fields).

* keyword attributes: value counts (``terms``), most frequent first, at most :data:`FACET_SIZE`;
* category paths: counts at the level below the deepest category filter (level 0 without one);
* the price: counts in range buckets (``global_configuration.price_ranges``, else rounded catalog
  quantiles), labelled ``"500-1000"``, ``"5000+"``;
* integers and booleans: value counts.

Errors: unknown name → 400 ``facet_unknown``; attribute not facetable → 400 ``facet_not_allowed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenant_config import Attribute, AttributeRole, AttributeType
from aisle.search.context import SearchContext
from aisle.search.index.schema import MAX_CATEGORY_LEVELS, level_field, numeric_field
from aisle.search.query.labels import number_label, range_label

FACET_SIZE = 30


@runtime_checkable
class ReadsValueCounts(Protocol):
    """A later stage that reads value counts of attributes beyond the requested facets (the follow-up
    question's candidates): the facets stage counts them in its one aggregation over the matches, and
    keeps them in ``ctx.output.value_counts``, out of the response's facets."""

    def counted_attributes(self, ctx: SearchContext) -> list[str]: ...


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
        aggs[name] = _aggregation(ctx, attr)
    return aggs


def _aggregation(ctx: SearchContext, attr: Attribute) -> dict[str, Any]:
    name, index = attr.name, ctx.index
    if attr.type is AttributeType.category_path:
        level = min(ctx.retrieval.category_level.get(name, 0), MAX_CATEGORY_LEVELS - 1)
        return {"terms": {"field": level_field(attr, level), "size": FACET_SIZE}}
    if attr.type is AttributeType.keyword:
        return {"terms": {"field": f"k_{name}", "size": FACET_SIZE}}
    if attr.type is AttributeType.number or (attr.role is AttributeRole.price):
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
        return {"range": {"field": numeric_field(attr), "ranges": spec or [{}]}}
    if attr.type is AttributeType.integer:
        return {"terms": {"field": numeric_field(attr), "size": FACET_SIZE}}
    if attr.type is AttributeType.boolean:
        return {"terms": {"field": f"b_{name}", "size": 2}}
    raise BadRequest(f"attribute '{name}' is not facetable", code=ErrorCode.FACET_NOT_ALLOWED)


class Facets:
    """Fills ``ctx.output.facet_counts`` for the requested facets over ``ctx.retrieval.match_query``,
    and ``ctx.output.value_counts`` with those and the attributes ``readers`` ask for (one aggregation)."""

    def __init__(self, readers: Sequence[ReadsValueCounts] = ()) -> None:
        self.readers = tuple(readers)

    def run(self, ctx: SearchContext) -> SearchContext:
        aggs = facet_aggregations(ctx)
        for reader in self.readers:
            for name in reader.counted_attributes(ctx):
                attr = ctx.index.attribute(name)
                if name not in aggs and attr is not None and attr.facetable:
                    aggs[name] = _aggregation(ctx, attr)
        if not aggs:
            return ctx
        if ctx.retrieval.match_query is None or ctx.output.total == 0:
            ctx.output.facet_counts = {name: [] for name in ctx.query.facets}
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
                flag = spec["terms"]["field"].startswith("b_")  # tantivy counts a boolean as 0 and 1
                values = [(_key(b["key"], flag), int(b["doc_count"])) for b in buckets if b["doc_count"]]
            ctx.output.value_counts[name] = values
        ctx.output.facet_counts = {name: ctx.output.value_counts[name] for name in ctx.query.facets}
        return ctx


def _key(key: Any, boolean: bool = False) -> str:
    if boolean or isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return number_label(key)
    return str(key)
