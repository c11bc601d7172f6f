"""One product as a tantivy document: what an index build and the live apply of the change log both add.

:class:`DocumentPlan` turns a product's fields (attribute name -> value, as a catalog version stores
them) into the document of catalog row ``ord``: the same fields, analyser input and normalisation for a
product indexed by :func:`~aisle.search.index.writer.build_index` and one written later through the
product API (:mod:`aisle.search.index.live`), so a search cannot tell them apart. Every document also
carries its stock (``stock_in``, ``stock_stores``: :mod:`aisle.search.index.schema`) from the standard
fields ``availability`` and ``inventories``, attributes of the tenant or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tantivy

from aisle.catalog.schema import PATH_SEP
from aisle.catalog.stock_fields import inventories_of
from aisle.core.stock import AVAILABILITY_FIELD, INVENTORIES_FIELD, in_stock, stores_in_stock
from aisle.core.tenant_config import Attribute, AttributeConfiguration, AttributeType
from aisle.search.index.schema import (
    IN_STOCK_FIELD,
    MAX_CATEGORY_LEVELS,
    STORES_FIELD,
    keyword_field,
    level_field,
    numeric_field,
)
from aisle.search.index.text_prep import searchable_text


class DocumentPlan:
    """The tantivy fields each attribute of ``config`` gives (see :mod:`aisle.search.index.schema`)."""

    def __init__(self, config: AttributeConfiguration) -> None:
        self.plan: list[tuple[Attribute, str | None, str | None]] = [
            (attr, keyword_field(attr), numeric_field(attr)) for attr in config.attributes
        ]

    def document(
        self,
        ord_: int,
        product_id: str,
        fields: Mapping[str, Any],
        texts: Mapping[str, str | None] | None = None,
    ) -> tantivy.Document:
        """The document of catalog row ``ord_`` (u64) for product ``product_id`` with ``fields`` (a
        missing or None value adds nothing; ``inventories`` as a dict or a version's JSON text).
        ``texts``: searchable attributes' values normalised already (:mod:`.text_prep`), by name."""
        doc = tantivy.Document()
        doc.add_unsigned("ord", ord_)
        doc.add_text("id", product_id)
        for attr, kf, nf in self.plan:
            value = fields.get(attr.name)
            if value is None:
                continue
            add_value(doc, attr, kf, nf, value, texts.get(attr.name) if texts else None)
        add_stock(doc, fields)
        return doc


def add_stock(doc: tantivy.Document, fields: Mapping[str, Any]) -> None:
    """Add the product's stock to ``doc``: ``stock_in`` always, ``stock_stores`` once per store that
    has it in stock (:mod:`aisle.core.stock`)."""
    availability = fields.get(AVAILABILITY_FIELD)
    stock = {
        AVAILABILITY_FIELD: availability.upper() if isinstance(availability, str) else availability,
        INVENTORIES_FIELD: inventories_of(fields.get(INVENTORIES_FIELD)),
    }
    doc.add_boolean(IN_STOCK_FIELD, in_stock(stock))
    for store in stores_in_stock(stock):
        doc.add_text(STORES_FIELD, store)


def add_value(
    doc: tantivy.Document,
    attr: Attribute,
    kf: str | None,
    nf: str | None,
    value: Any,
    text: str | None = None,
) -> None:
    """Add the fields ``attr`` gives for ``value`` (not None) to ``doc``: searchable text (normalised,
    category levels as words: ``text`` when given, else :func:`.text_prep.searchable_text` here), the
    raw keyword and its category levels, the number, the boolean."""
    if attr.searchable:
        doc.add_text(f"s_{attr.name}", text if text is not None else searchable_text(value))
    if kf:
        doc.add_text(kf, value)
        if attr.type is AttributeType.category_path:
            parts = value.split(PATH_SEP)
            for level in range(min(len(parts), MAX_CATEGORY_LEVELS)):
                doc.add_text(level_field(attr, level), PATH_SEP.join(parts[: level + 1]))
    if nf:
        if attr.type is AttributeType.number:
            doc.add_float(nf, float(value))
        else:
            doc.add_integer(nf, int(value))
    if attr.type is AttributeType.boolean and (attr.filterable or attr.facetable):
        doc.add_boolean(f"b_{attr.name}", bool(value))
