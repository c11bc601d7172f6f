"""The catalog as the predict service reads it: row lookup by product id, columns as Python lists.

Built once per (tenant, catalog version) and shared by every request; conditions, diversity and
``returnProduct`` all read product fields through it in O(1) per item.
"""

from __future__ import annotations

from collections.abc import Sequence
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
                table._by_category.setdefault(value, []).append(row)
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

    def same_category_rows(self, rows: Sequence[int]) -> list[int]:
        """Rows sharing a category with any of ``rows`` (catalog order), for backfill."""
        seen: set[int] = set()
        out: list[int] = []
        for r in rows:
            for other in self._by_category.get(self.category(r), ()):
                if other not in seen:
                    seen.add(other)
                    out.append(other)
        return out
