"""A tenant's stock policy in recommendations (issue 41; the contract is :mod:`aisle.core.stock`).

``global_configuration.json`` ``stock`` and a request's ``storeId`` make one :class:`StockRule`:

* ``hide``: a product out of stock (its ``availability``) is never recommended or bundled;
* ``bury``: it comes after every product in stock, each group in its own order;
* ``show`` (the default): nothing changes;
* with a ``storeId`` and store mode ``filter``: only what that store has in stock (its entry in
  ``inventories``), whatever the policy; with ``boost``: that store's products first, the rest after,
  the policy (by ``availability``) applying to both groups.

A rule is a filter (:meth:`StockRule.allows`, applied with the request's FILTER actions, so models and
backfill skip what it rejects) and an order (:meth:`StockRule.tier`, lower first, applied after the
scores and before the cut).
"""

from __future__ import annotations

from dataclasses import dataclass

from aisle.core.stock import StockConfig, StockPolicy
from aisle.recs.serving.products import ProductTable


@dataclass(frozen=True)
class StockRule:
    """The stock rule of one request: the tenant's ``policy``, the request's ``store_id`` (None: none)
    and what it does (``store_mode``: ``filter`` or ``boost``)."""

    policy: StockPolicy = StockPolicy.show
    store_id: str | None = None
    store_mode: str = "filter"

    @classmethod
    def of(cls, config: StockConfig, store_id: str | None) -> StockRule | None:
        """The rule of a tenant's ``stock`` configuration and a request's ``storeId``; None when it
        changes nothing (policy ``show``, no store)."""
        if config.policy == StockPolicy.show and store_id is None:
            return None
        return cls(config.policy, store_id, config.store)

    @property
    def orders(self) -> bool:
        """Whether :meth:`tier` can differ between products (bury, or a store boost)."""
        boosts = self.store_id is not None and self.store_mode == "boost"
        return boosts or (self.policy == StockPolicy.bury and not self._store_filters)

    @property
    def _store_filters(self) -> bool:
        return self.store_id is not None and self.store_mode == "filter"

    def allows(self, table: ProductTable, row: int | None) -> bool:
        """Whether the product at ``row`` (None: one the table does not hold) may be recommended."""
        if self._store_filters:
            return table.in_stock(row, self.store_id)
        return self.policy != StockPolicy.hide or table.in_stock(row)

    def tier(self, table: ProductTable, row: int | None) -> int:
        """0 first: the store's (with ``boost``) before the rest (+2), in stock before buried (+1)."""
        if self._store_filters:
            return 0
        tier = 0
        if self.store_id is not None and not table.in_stock(row, self.store_id):
            tier += 2
        if self.policy == StockPolicy.bury and not table.in_stock(row):
            tier += 1
        return tier
