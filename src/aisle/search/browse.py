"""Catalog browsing without a query: product pages, category children and the category tree."""

from __future__ import annotations

from dataclasses import dataclass, field

import tantivy

from aisle.catalog.schema import PATH_SEP
from aisle.core.errors import BadRequest, ErrorCode, NotFound
from aisle.core.tenant_config import Attribute, AttributeRole, AttributeType
from aisle.search.index.reader import TenantIndex, hit_count
from aisle.search.index.schema import MAX_CATEGORY_LEVELS, level_field
from aisle.search.model import FilterSpec
from aisle.search.query.filters import filter_clause
from aisle.search.query.terms import with_filter

MAX_CATEGORIES = 1000


class ProductNotFound(NotFound):
    code = ErrorCode.PRODUCT_NOT_FOUND


def combined_filter(index: TenantIndex, filters: list[FilterSpec]) -> tantivy.Query | None:
    clauses = [filter_clause(index, spec)[0] for spec in filters]
    if not clauses:
        return None
    if len(clauses) == 1:
        return clauses[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in clauses])


def list_items(
    index: TenantIndex, filters: list[FilterSpec], offset: int, size: int
) -> tuple[list[dict], int]:
    """A page of products in catalog order, optionally filtered. Returns (products, total)."""
    query = with_filter(tantivy.Query.all_query(), combined_filter(index, filters))
    result = index.searcher.search(
        query, max(size, 1), count=True, offset=offset, order_by_field="ord", order=tantivy.Order.Asc
    )
    ords = index.ords(result.hits) if size else []
    return [index.rows[o] for o in ords], hit_count(result)


def get_item(index: TenantIndex, product_id: str) -> dict:
    """One product by id. Raises :class:`ProductNotFound`."""
    ord_ = index.ord_by_id.get(product_id)
    if ord_ is None:
        raise ProductNotFound(f"product '{product_id}' not found in tenant '{index.tenant}'")
    return index.rows[ord_]


def category_attribute(index: TenantIndex, name: str | None) -> Attribute:
    """The category-path attribute named ``name`` (default: role category). Raises BadRequest."""
    attr = index.attribute(name) if name else index.config.by_role(AttributeRole.category)
    if attr is None or attr.type is not AttributeType.category_path or not attr.facetable:
        raise BadRequest(
            f"tenant '{index.tenant}' has no facetable category attribute"
            + (f" named '{name}'" if name else ""),
            code=ErrorCode.CATEGORIES_UNAVAILABLE,
        )
    return attr


def _level_counts(
    index: TenantIndex, attr: Attribute, level: int, query: tantivy.Query
) -> list[tuple[str, int]]:
    agg = {"c": {"terms": {"field": level_field(attr, level), "size": MAX_CATEGORIES}}}
    buckets = index.searcher.aggregate(query, agg).get("c", {}).get("buckets", [])
    return [(str(b["key"]), int(b["doc_count"])) for b in buckets]


def category_children(
    index: TenantIndex, attr: Attribute, parent: str | None, match: tantivy.Query
) -> list[tuple[str, str, int]]:
    """(name, path, count) of the categories directly below ``parent`` among matching products."""
    if parent:
        spellings = index.keyword_values.get(attr.name, {}).get(parent.lower())
        if not spellings:
            raise NotFound(f"category '{parent}' not found", code=ErrorCode.CATEGORY_NOT_FOUND)
        canonical = spellings[0]
        level = canonical.count(PATH_SEP) + 1
        if level >= MAX_CATEGORY_LEVELS:
            return []
        parent_q = tantivy.Query.term_query(index.schema, level_field(attr, level - 1), canonical)
        match = tantivy.Query.boolean_query([(tantivy.Occur.Must, match), (tantivy.Occur.Must, parent_q)])
    else:
        level = 0
    return [
        (path.split(PATH_SEP)[-1], path, count) for path, count in _level_counts(index, attr, level, match)
    ]


@dataclass
class Node:
    name: str
    path: str
    count: int
    children: list[Node] = field(default_factory=list)


def category_levels(
    index: TenantIndex, attr: Attribute, depth: int
) -> tuple[list[list[tuple[str, int]]], list[Node]]:
    """Counts per level (level 0 first) and the nested tree down to ``depth`` levels."""
    match = tantivy.Query.all_query()
    levels = [_level_counts(index, attr, level, match) for level in range(min(depth, MAX_CATEGORY_LEVELS))]
    nodes: dict[str, Node] = {}
    roots: list[Node] = []
    for level_values in levels:
        for path, count in level_values:
            node = Node(path.split(PATH_SEP)[-1], path, count)
            nodes[path] = node
            parent = path.rsplit(PATH_SEP, 1)[0] if PATH_SEP in path else None
            (nodes[parent].children if parent in nodes else roots).append(node)
    return levels, roots
