"""The catalog as the predict service reads it: row lookup by product id, columns as Python lists.

Built once per (tenant, catalog version) and shared by every request; conditions, diversity and
``returnProduct`` all read product fields through it in O(1) per item.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl


@dataclass
class ProductTable:
    """Column-wise product fields.

    Attributes:
        version: the catalog version it was built from.
        ids: product ids, row order.
        index: product id -> row.
        columns: field name -> one value per row (None when missing).
        title_field, description_field, price_field, brand_field, category_field: the columns that play
            these roles (from the tenant's attribute roles, else the conventional names), or None.
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
    _by_category: dict[Any, list[int]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_frame(
        cls, version: str, products: pl.DataFrame, roles: dict[str, str] | None = None
    ) -> ProductTable:
        """Build from a catalog frame (``id`` column plus attributes); ``roles`` maps role -> column."""
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
        )
        if table.category_field is not None:
            for row, value in enumerate(columns[table.category_field]):
                if value is None or value == "":
                    continue
                for prefix in category_prefixes(value):
                    table._by_category.setdefault(prefix, []).append(row)
        return table

    def row(self, product_id: str) -> int | None:
        return self.index.get(product_id)

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
