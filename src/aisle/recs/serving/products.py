"""The catalog as the predict service reads it: row lookup by product id, columns as Python lists.

Built once per (tenant, catalog version), then followed: the change-log entries written since the
version are applied to it as new immutable snapshots (:func:`aisle.recs.serving.table_changes.apply_entries`),
each shared by every request that starts while it is current; conditions, diversity and
``returnProduct`` all read product fields through it in O(1) per item.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import polars as pl

from aisle.core.stock import AVAILABILITY_FIELD, INVENTORIES_FIELD, in_stock


@dataclass
class ProductTable:
    """Column-wise product fields. Never changed once served: a change-log entry makes a new table.

    Attributes:
        version: the catalog version it was built from.
        ids: product ids, row order (a deleted product keeps its row, out of ``index``).
        index: product id -> row, for the products that exist.
        columns: field name -> one value per row (None when missing).
        title_field, description_field, price_field, brand_field, category_field: the columns that play
            these roles (from the tenant's attribute roles, else the conventional names), or None.
        seq: the last change-log entry applied (the version's own ``sequence`` before any).
        gone: ids deleted by the entries applied (and not written again since): never recommended,
            even by a model trained before the delete.
        written: ids the entries applied created or changed (and that exist): what a model trained
            on the catalog version may know differently (:mod:`aisle.recs.serving.live_models`).
    """

    version: str
    ids: list[str]
    index: dict[str, int]
    columns: dict[str, list[Any]]
    title_field: str | None = None
    description_field: str | None = None
    price_field: str | None = None
    brand_field: str | None = None
    category_field: str | None = None
    seq: int = 0
    gone: frozenset[str] = frozenset()
    written: frozenset[str] = frozenset()
    _by_category: dict[Any, list[int]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_frame(
        cls, version: str, products: pl.DataFrame, roles: dict[str, str] | None = None, seq: int = 0
    ) -> ProductTable:
        """Build from a catalog frame (``id`` column plus attributes); ``roles`` maps role -> column;
        ``seq``: the change-log sequence the version includes."""
        roles = roles or {}
        ids = [str(x) for x in products.get_column("id").to_list()]
        columns = {c: products.get_column(c).to_list() for c in products.columns if c != "id"}

        def pick(role: str, *names: str) -> str | None:
            if roles.get(role) in columns:
                return roles[role]
            return next((n for n in names if n in columns), None)

        table = cls(
            version=version,
            ids=ids,
            index={pid: i for i, pid in enumerate(ids)},
            columns=columns,
            title_field=pick("title", "title", "name"),
            description_field=pick("description", "description"),
            price_field=pick("price", "price"),
            brand_field=pick("brand", "brand"),
            category_field=pick("category", "category", "article_type"),
            seq=seq,
        )
        if table.category_field is not None:
            for row, value in enumerate(columns[table.category_field]):
                if value is None or value == "":
                    continue
                for prefix in category_prefixes(value):
                    table._by_category.setdefault(prefix, []).append(row)
        return table

    @property
    def key(self) -> tuple[str, int]:
        """What names this snapshot: ``(version, seq)``."""
        return (self.version, self.seq)

    def row(self, product_id: str) -> int | None:
        """The product's row, None when it does not exist (never did, or deleted)."""
        return self.index.get(product_id)

    def in_stock(self, row: int | None, store_id: str | None = None) -> bool:
        """Whether the product at ``row`` is sellable (:func:`aisle.core.stock.in_stock`; with
        ``store_id``, at that store). A product the table does not hold has no stock fields: in stock,
        but at no store."""
        if row is None:
            return store_id is None
        fields = {AVAILABILITY_FIELD: self.value(row, AVAILABILITY_FIELD)}
        if store_id is not None:
            stores = self.value(row, INVENTORIES_FIELD)
            if isinstance(stores, str | bytes) and stores:  # a catalog frame may keep it as JSON text
                try:
                    stores = orjson.loads(stores)
                except orjson.JSONDecodeError:
                    stores = None
            fields[INVENTORIES_FIELD] = stores
        return in_stock(fields, store_id)

    def value(self, row: int, name: str | None) -> Any:
        if name is None:
            return None
        column = self.columns.get(name)
        return None if column is None else column[row]

    def brand(self, row: int) -> Any:
        return self.value(row, self.brand_field)

    def category(self, row: int) -> Any:
        return self.value(row, self.category_field)

    def same_category_rows(self, rows: Sequence[int]) -> Iterator[int]:
        """Rows sharing a category with any of ``rows``, for backfill: the same leaf first, then each
        parent level of a ``"A > B > C"`` path (catalog order within a level). Lazy."""
        for _, level in self.same_category_levels(rows):
            yield from level

    def same_category_levels(self, rows: Sequence[int]) -> Iterator[tuple[Any, list[int]]]:
        """:meth:`same_category_rows` one category at a time: ``(category path, its new rows)``, the
        seeds' leaves first, then each parent level. Lazy."""
        seen: set[int] = set(rows)
        levels = [category_prefixes(c) for c in (self.category(r) for r in rows) if c is not None and c != ""]
        depth = max((len(p) for p in levels), default=0)
        for level in range(depth):
            for prefixes in levels:
                if level < len(prefixes):
                    new = [r for r in self._by_category.get(prefixes[level], ()) if r not in seen]
                    seen.update(new)
                    if new:
                        yield prefixes[level], new

    def category_rows(self, category: Any) -> list[int]:
        """Every row of ``category`` (a full path or any of its prefixes), catalog order."""
        return self._by_category.get(category, [])


def category_prefixes(value: Any) -> tuple[Any, ...]:
    """``"A > B > C"`` -> ``("A > B > C", "A > B", "A")``, deepest first; other values -> ``(value,)``."""
    if not isinstance(value, str) or ">" not in value:
        return (value,)
    parts = [p.strip() for p in value.split(">")]
    return tuple(" > ".join(parts[:n]) for n in range(len(parts), 0, -1))
