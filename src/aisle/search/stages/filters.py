"""Turn request filters into one tantivy filter query (no effect on scores).

Each field's clause comes from :func:`aisle.search.query.filters.filter_clause`, which raises for a
bad filter: unknown field → 400 ``filter_unknown``; a field not declared filterable → 400
``filter_not_allowed``; a value of the wrong type → 400 ``filter_value_invalid``.
"""

from __future__ import annotations

import tantivy

from aisle.catalog.schema import PATH_SEP
from aisle.core.tenant_config import AttributeType
from aisle.search.context import SearchContext
from aisle.search.query.filters import filter_clause


class ApplyFilters:
    """Combines every request filter (AND across fields) into ``ctx.retrieval.filter_query``."""

    def run(self, ctx: SearchContext) -> SearchContext:
        clauses = []
        for spec in ctx.retrieval.filters:
            query, applied = filter_clause(ctx.index, spec)
            clauses.append(query)
            assert ctx.graph is not None
            ctx.graph.filters.append(applied)
            attr = ctx.index.attribute(spec.field)
            if attr is not None and attr.type is AttributeType.category_path and applied.values:
                ctx.retrieval.category_level[attr.name] = (
                    min(str(v).count(PATH_SEP) for v in applied.values) + 1
                )
        if clauses:
            ctx.retrieval.filter_query = (
                clauses[0]
                if len(clauses) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in clauses])
            )
        return ctx
