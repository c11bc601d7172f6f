"""How a tenant's attribute configuration becomes a tantivy schema.

Field naming (one attribute may give several fields):

* ``ord``: row number in the catalog (u64 fast field): hits are mapped back to products by it.
* ``id``: the product id, raw token, for pins, hides and lookups.
* ``s_<name>``: searchable text, analysed by :data:`ANALYZER` (BM25 scored, positions kept).
* ``k_<name>``: exact keyword value, raw, fast (filters, terms facets, sorting);
  a ``category_path`` also has ``k_<name>__l<level>``: the path cut after that level.
* ``n_<name>``: number (f64) or integer (i64), indexed and fast (ranges, sorting, range facets).
* ``b_<name>``: boolean.
* ``stock_in``: whether the product is sellable (:func:`aisle.core.stock.in_stock`; boolean, every
  tenant), and ``stock_stores``: the ids of the stores that have it in stock (raw tokens), so the stock
  policy and a request's ``storeId`` are term queries (:mod:`aisle.search.stages.stock`). Neither name
  can be an attribute's field (those start ``s_ k_ n_ b_``).
"""

from __future__ import annotations

import tantivy

from aisle.core.tenant_config import Attribute, AttributeConfiguration, AttributeType

ANALYZER = "aisle_en"
MAX_CATEGORY_LEVELS = 4
IN_STOCK_FIELD = "stock_in"
STORES_FIELD = "stock_stores"


def build_analyzer() -> tantivy.TextAnalyzer:
    """Simple tokenizer, long tokens dropped, lowercase, ASCII folding, English Snowball stemmer."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def keyword_field(attr: Attribute) -> str | None:
    if attr.type in (AttributeType.keyword, AttributeType.category_path) and (
        attr.filterable or attr.facetable or attr.sortable
    ):
        return f"k_{attr.name}"
    return None


def level_field(attr: Attribute, level: int) -> str:
    return f"k_{attr.name}__l{level}"


def numeric_field(attr: Attribute) -> str | None:
    if attr.type in (AttributeType.number, AttributeType.integer) and (
        attr.filterable or attr.facetable or attr.sortable
    ):
        return f"n_{attr.name}"
    return None


def build_schema(config: AttributeConfiguration) -> tantivy.Schema:
    """The tantivy schema for ``config`` (see module docstring for the field naming)."""
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("ord", stored=False, indexed=False, fast=True)
    sb.add_text_field("id", stored=False, tokenizer_name="raw", index_option="basic")
    for attr in config.attributes:
        if attr.searchable:
            sb.add_text_field(
                f"s_{attr.name}", stored=False, tokenizer_name=ANALYZER, index_option="position"
            )
        kf = keyword_field(attr)
        if kf:
            sb.add_text_field(kf, stored=False, fast=True, tokenizer_name="raw", index_option="basic")
            if attr.type is AttributeType.category_path:
                for level in range(MAX_CATEGORY_LEVELS):
                    sb.add_text_field(
                        level_field(attr, level),
                        stored=False,
                        fast=True,
                        tokenizer_name="raw",
                        index_option="basic",
                    )
        nf = numeric_field(attr)
        if nf:
            if attr.type is AttributeType.number:
                sb.add_float_field(nf, stored=False, indexed=True, fast=True)
            else:
                sb.add_integer_field(nf, stored=False, indexed=True, fast=True)
        if attr.type is AttributeType.boolean and (attr.filterable or attr.facetable):
            sb.add_boolean_field(f"b_{attr.name}", stored=False, indexed=True, fast=True)
    sb.add_boolean_field(IN_STOCK_FIELD, stored=False, indexed=True, fast=True)
    sb.add_text_field(STORES_FIELD, stored=False, tokenizer_name="raw", index_option="basic")
    return sb.build()
