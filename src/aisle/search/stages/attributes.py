"""Query understanding, second part: attributes named in the query become filter queries.

Retrieval applies them as filters in the strict stage and as boosts in the relaxed and typo
stages, so a wrong extraction can narrow the first answer but never empty the results. An attribute the
request filters itself, or lists in ``ignore_understood`` (a storefront chip removed), is not applied.
"""

from __future__ import annotations

from aisle.core.tenant_config import AttributeRole
from aisle.search.context import SearchContext
from aisle.search.model import AttributeMatch, FilterSpec
from aisle.search.query.filters import filter_clause

# Boost per recognised attribute value a product has, by the attribute's role. A structured match
# outweighs a matched query word (COVERAGE_SCORE, 10): "red nike shoes" ranks a red shoe above a
# grey one whose title mentions red; the product type (category) weighs most.
ROLE_BOOST = {
    AttributeRole.category: 20.0,
    AttributeRole.brand: 15.0,
    AttributeRole.color: 15.0,
    AttributeRole.gender: 12.0,
    AttributeRole.size: 10.0,
}
OTHER_BOOST = 20.0  # attributes opted in with extract=true, e.g. an article type
# A price constraint is explicit ("under 2000"): as strong as the product type.
PRICE_BOOST = 25.0


class ExtractAttributes:
    """Fills ``ctx.understanding.extracted`` (one query per recognised attribute or price) and the
    queryGraph."""

    def run(self, ctx: SearchContext) -> SearchContext:
        assert ctx.graph is not None
        index = ctx.index
        # the shopper's own filter wins; an understood attribute the shopper set aside is not applied
        requested = {f.field for f in ctx.retrieval.filters} | set(ctx.query.ignore_understood)
        for match in index.dictionary.match(ctx.understanding.match_terms or ctx.understanding.terms):
            if match.field in requested:
                continue
            spec = FilterSpec(field=match.field, value=list(match.values))
            query, _ = filter_clause(index, spec)
            attr = index.attribute(match.field)
            boost = ROLE_BOOST.get(attr.role, OTHER_BOOST) if attr is not None and attr.role else OTHER_BOOST
            ctx.understanding.extracted.append((query, boost))
            ctx.graph.attributes.append(
                AttributeMatch(field=match.field, values=list(match.values), text=match.text)
            )
        price_attr = index.config.by_role(AttributeRole.price)
        if price_attr is not None and price_attr.name in ctx.query.ignore_understood:
            ctx.graph.price = None  # set aside: the phrase ("under 2000") is neither applied nor reported
        if (
            ctx.understanding.price is not None
            and price_attr is not None
            and price_attr.name not in requested
        ):
            query, _ = filter_clause(
                index, FilterSpec(field=price_attr.name, value=ctx.understanding.price.as_range())
            )
            ctx.understanding.extracted.append((query, PRICE_BOOST))
        return ctx
