"""Last writer by time wins: which operations of a write apply, which are stale, which fail.

Google Retail merges inventory field by field by each field's last update time; Aisle orders every
product write so (see :mod:`aisle.catalog.state` for the times kept):

* an **upsert** or **delete** at time t is stale when the product (or its tombstone) holds a write newer
  than t, of the whole product or of any field;
* a **patch** at time t applies the fields whose own time is not newer than t; it is stale when none is
  left. A patch of a product that does not exist fails (``product_not_found``), unless its tombstone is
  newer than t (then it is stale: the delete came later);
* a delete of an id never written fails (``product_not_found``);
* a store's inventory entry given in a write (``inventories``, :mod:`aisle.catalog.stock_fields`) is
  ordered against that store's own time only: an older one is left out (``staleFields`` lists
  ``inventories/<storeId>``), the other stores' and fields apply. A write of inventory alone (``PUT
  /products/{id}/inventory/{storeId}``: a patch of one store) whose store is newer is stale; on a
  product that does not exist it fails as a patch does. Whole-product writes are not ordered against
  store entries (an upsert keeps them).

Equal times apply (a replay of the same write changes nothing). Operations of one write are decided in
order, each seeing the ones before it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from aisle.catalog.bulk import Bulk
from aisle.catalog.changes import Op
from aisle.catalog.products import Fields
from aisle.catalog.state import DOC, CatalogState, Times, apply_op, field_time, latest_time, store_time
from aisle.catalog.stock_fields import store_key
from aisle.core.errors import AisleError, ErrorCode, NotFound
from aisle.core.stock import INVENTORIES_FIELD

Status = Literal["applied", "stale", "failed"]


@dataclass
class OpResult:
    """What became of one operation: ``applied``, ``stale`` (ignored: the stored write is newer) or
    ``failed`` (``error`` says why). ``stale_fields``: a patch's fields left out as stale;
    ``ignored_fields``: names the tenant's configuration does not have."""

    id: str
    op: str
    status: Status = "applied"
    error: AisleError | None = None
    stale_fields: list[str] = field(default_factory=list)
    ignored_fields: list[str] = field(default_factory=list)


@dataclass
class Planned:
    """One operation of a write: ``op`` to decide, or None when it failed already (``result.error``)."""

    op: Op | None
    result: OpResult


class _Shadow:
    """``state`` with a write's earlier operations applied on top, without changing ``state``."""

    def __init__(self, state: CatalogState) -> None:
        self.state = state
        self.overlay: dict[str, Fields | None] = {}
        self.times: dict[str, Times] = {}

    def product(self, product_id: str) -> Fields | None:
        if product_id in self.overlay:
            found = self.overlay[product_id]
            return None if found is None else dict(found)
        return self.state.product(product_id)

    def exists(self, product_id: str) -> bool:
        if product_id in self.overlay:
            return self.overlay[product_id] is not None
        return self.state.exists(product_id)

    def inventories(self, product_id: str) -> dict[str, Any] | None:
        if product_id in self.overlay:
            found = self.overlay[product_id]
            return None if found is None else found.get(INVENTORIES_FIELD)
        return self.state.inventories(product_id)

    def times_of(self, product_id: str) -> Times | None:
        if product_id in self.times:
            return dict(self.times[product_id])
        return self.state.times_of(product_id)


def _missing(product_id: str) -> NotFound:
    return NotFound(f"product '{product_id}' not found", code=ErrorCode.PRODUCT_NOT_FOUND)


def _fresh_stores(op: Op, times: Times | None, result: OpResult) -> Op:
    """``op`` without the store entries of its ``inventories`` older than the stored ones (listed in
    ``result.stale_fields``); without ``inventories`` when none is left."""
    given = op.fields.get(INVENTORIES_FIELD)
    if not isinstance(given, dict):
        return op
    fresh = {s: e for s, e in given.items() if op.time >= store_time(times, s)}
    result.stale_fields += sorted(store_key(s) for s in set(given) - set(fresh))
    fields = {k: v for k, v in op.fields.items() if k != INVENTORIES_FIELD}
    if fresh:
        fields[INVENTORIES_FIELD] = fresh
    return Op(op.op, op.id, op.time, fields)


def _decide(view: _Shadow, op: Op, result: OpResult) -> Op | None:
    """The operation to log for ``op`` (a patch keeps its fresh fields), or None; fills ``result``."""
    times = view.times_of(op.id)
    exists = view.exists(op.id)
    if op.op in ("upsert", "delete"):
        if op.op == "delete" and times is None:
            result.status, result.error = "failed", _missing(op.id)
            return None
        if times is not None and op.time < latest_time(times):
            result.status = "stale"
            return None
        return _fresh_stores(op, times if exists else None, result)
    if not exists:
        if times is not None and op.time < times.get(DOC, 0):
            result.status = "stale"
        else:
            result.status, result.error = "failed", _missing(op.id)
        return None
    assert times is not None
    stores = _fresh_stores(op, times, result)
    fresh = {
        k: v for k, v in stores.fields.items() if k == INVENTORIES_FIELD or op.time >= field_time(times, k)
    }
    result.stale_fields = sorted(
        set(result.stale_fields) | (set(op.fields) - {INVENTORIES_FIELD} - set(fresh))
    )
    if op.fields and not fresh:
        result.status = "stale"
        return None
    return Op("patch", op.id, op.time, fresh)


def decide(state: CatalogState, planned: list[Planned]) -> list[Op]:
    """Decide every planned operation against ``state`` in order (each ``result`` is filled); returns the
    operations to log, in order. ``state`` is not changed."""
    view = _Shadow(state)
    logged: list[Op] = []
    repeated = Counter(plan.op.id for plan in planned if plan.op is not None)
    for plan in planned:
        if plan.op is None:
            continue
        decided = _decide(view, plan.op, plan.result)
        if decided is not None:
            if repeated[decided.id] > 1:  # only a later operation on the same product reads the shadow
                apply_op(view, decided)  # type: ignore[arg-type]  # the shadow has the state's shape
            logged.append(decided)
    return logged


def decide_bulk(state: CatalogState, frame: pl.DataFrame, time: int) -> tuple[Bulk | None, int]:
    """Decide whole-product upserts of ``frame``'s products (ids unique) at ``time`` against ``state``
    as :func:`decide` decides each (stale when the product holds a newer write); returns the bulk of
    those that apply (None: none does) and how many were stale. ``state`` is not changed."""
    ids = frame["id"].to_list()
    fresh = [times is None or time >= latest_time(times) for times in (state.times_of(pid) for pid in ids)]
    stale = len(ids) - sum(fresh)
    if stale == len(ids):
        return None, stale
    return Bulk(frame.filter(pl.Series(fresh, dtype=pl.Boolean)) if stale else frame, time), stale
