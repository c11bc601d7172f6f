"""The front door of product writes: the product API, its batches and imports, all through the change log.

:class:`CatalogWriter` validates each operation against the tenant's attribute configuration
(:mod:`aisle.catalog.products`), decides it against the tenant's current products by update time
(:mod:`aisle.catalog.ordering`) and appends what applies as one change-log entry
(:mod:`aisle.catalog.changes`): the write is acknowledged, with the tenant's sequence, once that entry is
in the bucket. The search processes follow the log and apply each entry to their open index
(:mod:`aisle.search.indexes`); compaction folds it into a catalog version in the background
(:mod:`aisle.catalog.compaction`).

One :class:`~aisle.catalog.state.CatalogState` per tenant is kept in memory and brought up to date
before each write or read: one pointer read and one GET per new entry (one that finds nothing when the
log has not moved). A process that starts, or finds a newer version, loads that version and the
entries after it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aisle.catalog.bulk import Bulk
from aisle.catalog.changes import ChangeLog, Entry, Op
from aisle.catalog.ordering import OpResult, Planned, decide, decide_bulk
from aisle.catalog.products import (
    UPDATE_TIME,
    Fields,
    ProductInvalid,
    check_product_id,
    checked_fields,
    now_micros,
    parse_update_time,
    whole_product,
)
from aisle.catalog.readers import BadRow, Progress, detect_format, read_catalog_bytes
from aisle.catalog.schema import map_catalog
from aisle.catalog.state import CatalogState, Times
from aisle.catalog.stock_fields import StockInvalid, check_entry, check_store_id
from aisle.catalog.store import CatalogStore
from aisle.core.errors import AisleError, BadRequest, ErrorCode, NotFound
from aisle.core.stock import INVENTORIES_FIELD
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import AttributeConfiguration

MAX_BATCH = 10_000
"""Operations in one ``POST /products/batch`` (Google Retail's product import takes 100 per inline
request and 12,000 writes a minute; Typesense imports any number)."""
Reconciliation = Literal["incremental", "full"]


@dataclass(frozen=True)
class WriteOutcome:
    """The result of each operation, in order, and the tenant's catalog sequence after the write;
    of a bulk's upserts, how many applied and how many were stale."""

    results: list[OpResult]
    sequence: int
    bulk_applied: int = 0
    bulk_stale: int = 0


@dataclass(frozen=True)
class ProductRecord:
    """A product as stored now: its fields, its update times (microseconds) and the sequence read."""

    id: str
    fields: Fields
    times: Times
    sequence: int


@dataclass(frozen=True)
class ImportOutcome:
    """An import: products upserted, stale (a newer write kept), deleted (``full``), rows skipped."""

    applied: int
    stale: int
    deleted: int
    bad_rows: list[BadRow] = field(default_factory=list)
    sequence: int = 0


class CatalogWriter:
    """Product writes and reads of every tenant of ``tenants`` (see the module docstring).

    Every method raises TenantNotFound (404) for an unknown tenant and StorageUnavailable (503, with
    ``Retry-After``; nothing acknowledged) when the bucket fails.
    """

    def __init__(self, tenants: Tenants) -> None:
        self.tenants = tenants
        self._states: dict[str, CatalogState] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.on_write: Callable[[str], None] | None = None
        """Called with the tenant after each acknowledged write (the compactor's wake-up)."""

    def _lock(self, tenant: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(tenant, threading.Lock())

    def _fresh(self, tenant: str) -> CatalogState:
        """The tenant's state brought up to the log's head (its lock held)."""
        scope = self.tenants.scope(tenant)
        pointer = CatalogStore(scope).pointer()  # before the entries: see changes.py on pruning
        state = self._states.get(tenant)
        if state is None or (
            pointer is not None and pointer.version != state.version and pointer.sequence >= state.seq
        ):
            state = CatalogState.load(scope, pointer)
        for entry in ChangeLog(scope).after(state.seq):
            state.apply(entry)
        self._states[tenant] = state
        return state

    def write(self, tenant: str, planned: list[Planned], bulk: Bulk | None = None) -> WriteOutcome:
        """Decide ``bulk``'s upserts (as columns: :mod:`aisle.catalog.bulk`) then ``planned`` and log
        what applies as one entry; each result says what became of its operation. An entry taken by
        another writer first is read, and the operations decided again."""
        self.tenants.config(tenant)
        log = ChangeLog(self.tenants.scope(tenant))
        with self._lock(tenant):
            state = self._fresh(tenant)
            while True:
                for plan in planned:
                    if plan.op is not None:
                        plan.result.status, plan.result.error, plan.result.stale_fields = "applied", None, []
                fresh, stale = decide_bulk(state, bulk.frame, bulk.time) if bulk else (None, 0)
                ops = decide(state, planned)
                if not ops and fresh is None:
                    return WriteOutcome([p.result for p in planned], state.seq, 0, stale)
                if log.create(state.seq + 1, ops, fresh):
                    state.apply(Entry(state.seq + 1, ops, fresh))
                    break
                state = self._fresh(tenant)
        if self.on_write is not None:
            self.on_write(tenant)
        return WriteOutcome([p.result for p in planned], state.seq, len(fresh) if fresh else 0, stale)

    def _single(self, tenant: str, plan: Planned) -> WriteOutcome:
        outcome = self.write(tenant, [plan])
        error = outcome.results[0].error
        if error is not None:
            raise error
        return outcome

    def upsert(self, tenant: str, product_id: str, body: Mapping[str, Any]) -> WriteOutcome:
        """Create or replace the product with ``body`` (its fields, optionally ``updateTime``).

        Raises: ProductInvalid (422) naming the field; nothing is written."""
        return self._single(tenant, self.plan(self._attributes(tenant), "upsert", product_id, body))

    def patch(self, tenant: str, product_id: str, body: Mapping[str, Any]) -> WriteOutcome:
        """Change the fields ``body`` gives (JSON merge patch, RFC 7396: null removes a field).

        Raises: ProductInvalid (422); NotFound ``product_not_found`` (404) for a product that does not
        exist."""
        return self._single(tenant, self.plan(self._attributes(tenant), "patch", product_id, body))

    def delete(self, tenant: str, product_id: str, update_time: str | None = None) -> WriteOutcome:
        """Delete the product. Raises: NotFound ``product_not_found`` (404) for an id never written."""
        body = {} if update_time is None else {UPDATE_TIME: update_time}
        return self._single(tenant, self.plan(self._attributes(tenant), "delete", product_id, body))

    def batch(self, tenant: str, operations: Sequence[Mapping[str, Any]]) -> WriteOutcome:
        """Up to :data:`MAX_BATCH` operations ``{"op", "id", "product"?, "updateTime"?}`` as one write;
        a bad one fails alone (its result says why), the others apply.

        Raises: AisleError ``batch_too_large`` (413) past the limit; nothing is written."""
        _check_batch(operations)
        attributes = self._attributes(tenant)
        planned = []
        for raw in operations:
            body = dict(raw.get("product") or {})
            if raw.get(UPDATE_TIME) is not None:
                body[UPDATE_TIME] = raw[UPDATE_TIME]
            planned.append(self.plan(attributes, str(raw["op"]), str(raw["id"]), body, alone=True))
        return self.write(tenant, planned)

    def inventory(self, tenant: str, product_id: str, store_id: str, body: Mapping[str, Any]) -> WriteOutcome:
        """Set one store's inventory of the product: ``body`` = ``{"availability", "quantity"?,
        "updateTime"?}``, merged by that store's own update time (Google Retail's
        ``addLocalInventories``): ``stale`` when the stored entry of that store is newer; the product's
        other stores and fields are untouched.

        Raises: ProductInvalid (422) naming the field; UpdateTimeInvalid (400); NotFound
        ``product_not_found`` (404) for a product that does not exist; nothing is written."""
        self.tenants.config(tenant)
        return self._single(tenant, self.plan_inventory(product_id, store_id, body))

    def inventory_batch(self, tenant: str, operations: Sequence[Mapping[str, Any]]) -> WriteOutcome:
        """Up to :data:`MAX_BATCH` store inventories ``{"id", "storeId", "availability", "quantity"?,
        "updateTime"?}`` as one write; a bad one fails alone, the others apply (each as :meth:`inventory`).

        Raises: AisleError ``batch_too_large`` (413) past the limit; nothing is written."""
        _check_batch(operations)
        self.tenants.config(tenant)
        planned = []
        for raw in operations:
            body = {k: v for k, v in raw.items() if k not in ("id", "storeId")}
            planned.append(self.plan_inventory(str(raw["id"]), str(raw["storeId"]), body, alone=True))
        return self.write(tenant, planned)

    @staticmethod
    def plan_inventory(
        product_id: str, store_id: str, body: Mapping[str, Any], *, alone: bool = False
    ) -> Planned:
        """One store's inventory write checked: a patch of the product's ``inventories`` for that store
        (its result's ``op`` is ``inventory``). ``alone`` as in :meth:`plan`."""
        result = OpResult(product_id, "inventory")
        try:
            check_product_id(product_id)
            raw_time = body.get(UPDATE_TIME)
            time = now_micros() if raw_time is None else parse_update_time(raw_time)
            try:
                check_store_id(store_id)
                fields = {k: v for k, v in body.items() if k != UPDATE_TIME}
                entry = check_entry(store_id, fields, field="")
            except StockInvalid as exc:
                raise ProductInvalid(exc.field.lstrip("."), exc.problem) from None
            if entry is None:
                raise ProductInvalid("availability", "is required")
            return Planned(Op("patch", product_id, time, {INVENTORIES_FIELD: {store_id: entry}}), result)
        except ProductInvalid as exc:
            if not alone:
                raise
            result.status, result.error = "failed", exc
            return Planned(None, result)

    def stores(self, tenant: str) -> list[str]:
        """The store ids some product of the tenant has an inventory entry for, sorted (as stored now)."""
        self.tenants.config(tenant)
        with self._lock(tenant):
            return self._fresh(tenant).store_ids()

    def _attributes(self, tenant: str) -> AttributeConfiguration:
        return self.tenants.config(tenant).attributes

    @staticmethod
    def plan(
        attributes: AttributeConfiguration,
        kind: str,
        product_id: str,
        body: Mapping[str, Any],
        *,
        alone: bool = False,
    ) -> Planned:
        """One operation checked against ``attributes``. ``alone``: a check that fails makes a failed
        result (a batch's operation) instead of raising ProductInvalid."""
        result = OpResult(product_id, kind)
        try:
            check_product_id(product_id)
            raw_time = body.get(UPDATE_TIME)
            time = now_micros() if raw_time is None else parse_update_time(raw_time)
            fields, result.ignored_fields = checked_fields(attributes, product_id, body)
            if kind == "upsert":
                fields = whole_product(attributes, fields)
            return Planned(Op(kind, product_id, time, fields), result)  # type: ignore[arg-type]
        except ProductInvalid as exc:
            if not alone:
                raise
            result.status, result.error = "failed", exc
            return Planned(None, result)

    def product(self, tenant: str, product_id: str) -> ProductRecord:
        """The product as stored now (the last version plus the log).

        Raises: NotFound ``product_not_found`` (404)."""
        self.tenants.config(tenant)
        with self._lock(tenant):
            state = self._fresh(tenant)
            fields, times = state.product(product_id), state.times_of(product_id)
        if fields is None or times is None:
            raise NotFound(f"product '{product_id}' not found", code=ErrorCode.PRODUCT_NOT_FOUND)
        return ProductRecord(product_id, fields, times, state.seq)

    def sequence(self, tenant: str) -> int:
        """The tenant's catalog sequence: the change log's head as this process reads it now."""
        self.tenants.config(tenant)
        with self._lock(tenant):
            return self._fresh(tenant).seq

    def import_data(
        self,
        tenant: str,
        data: bytes,
        fmt: str,
        *,
        reconciliation: Reconciliation = "incremental",
        update_time: str | None = None,
        progress: Progress | None = None,
    ) -> ImportOutcome:
        """Import a catalog file's bytes (``fmt``: jsonl, csv or parquet, gzipped or not) as one write:
        an upsert per valid row, mapped by the tenant's attributes as ``aisle catalog import`` maps them;
        ``full`` also deletes every product the file lacks. Bad rows are skipped and reported by line.

        Raises: BadRequest (400): unreadable data, no id column, no valid row at all."""
        attributes = self._attributes(tenant)
        raw, bad = read_catalog_bytes(data, fmt, progress)
        products, rejected = map_catalog(raw, attributes)
        bad = sorted(bad + rejected, key=lambda b: b.line)
        if products.height == 0:
            first = f"line {bad[0].line}: {bad[0].reason}" if bad else "the file holds no product"
            raise BadRequest(
                f"no valid product in the file ({len(bad)} bad rows; first: {first})",
                code=ErrorCode.CATALOG_EMPTY,
            )
        time = now_micros() if update_time is None else parse_update_time(update_time)
        if progress:
            progress("write", products.height, products.height)
        planned = []
        if reconciliation == "full":
            planned = self._deletes_of_missing(tenant, set(products["id"].to_list()), time)
        outcome = self.write(tenant, planned, Bulk(products, time))  # ids are unique (map_catalog)
        deleted = sum(1 for p in planned if p.result.status == "applied")
        return ImportOutcome(outcome.bulk_applied, outcome.bulk_stale, deleted, bad, outcome.sequence)

    def import_file(
        self,
        tenant: str,
        path: Path,
        fmt: str | None = None,
        *,
        reconciliation: Reconciliation = "incremental",
        progress: Progress | None = None,
    ) -> ImportOutcome:
        """:meth:`import_data` of the file at ``path`` (``fmt``: default from its name).

        Raises: BadRequest (400): a missing file, an unknown format, and what :meth:`import_data` raises."""
        if not path.is_file():
            raise BadRequest(f"catalog file '{path}' does not exist", code=ErrorCode.CATALOG_FILE_MISSING)
        fmt = fmt or detect_format(path)
        return self.import_data(
            tenant, path.read_bytes(), fmt, reconciliation=reconciliation, progress=progress
        )

    def _deletes_of_missing(self, tenant: str, keep: set[str], time: int) -> list[Planned]:
        with self._lock(tenant):
            missing = [pid for pid in self._fresh(tenant).ids() if pid not in keep]
        return [Planned(Op("delete", pid, time), OpResult(pid, "delete")) for pid in missing]


def _check_batch(operations: Sequence[Any]) -> None:
    """Raises: AisleError ``batch_too_large`` (413) for more than :data:`MAX_BATCH` operations."""
    if len(operations) > MAX_BATCH:
        raise AisleError(
            f"a batch takes at most {MAX_BATCH:,} operations; this one has {len(operations):,}",
            code=ErrorCode.BATCH_TOO_LARGE,
            details={"limit": MAX_BATCH, "operations": len(operations)},
        )


def stale_count(results: list[OpResult]) -> int:
    """How many of ``results`` were stale."""
    return sum(1 for r in results if r.status == "stale")
