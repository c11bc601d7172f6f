"""A tenant's current products: the base catalog version plus the change-log entries after it.

What ``GET /products/{id}`` reads, what a write's staleness is decided against, and what compaction
writes as the next version. The base is the version the catalog pointer names (``sequence`` S: the
entries it includes); entries S+1, S+2, ... are applied on top, in order, as they stand (each was
decided against the entries before it, :mod:`aisle.catalog.changes`).

Update times (microseconds since the epoch) are kept per product, not in any search index:
``{"_doc": t}`` is the time of the last whole-product write (an upsert, or a delete: a *tombstone*, kept
so a late write older than the delete stays deleted), and a field patched later has its own time. A
field's time is the later of the two. A version folded from the log stores them beside its products,
``catalog/<version>/update_times.json`` = ``{"default": t, "times": {id: {...}}}``; a product it does not
list (every product of a version written by a whole-file import) has ``{"_doc": default}``, the
version's creation time.

Stock (:mod:`aisle.catalog.stock_fields`): ``availability`` and ``inventories`` are kept for every
tenant; each store's inventory entry has its own time (``inventories/<storeId>``), which neither a
whole-product write's staleness nor its ``_doc`` time covers: an upsert keeps the stored inventories
and their times unless it gives some, and an inventory write is ordered only against its own store's.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import orjson
import polars as pl

from aisle.catalog.bulk import Bulk
from aisle.catalog.changes import Entry, Op, upserts
from aisle.catalog.products import Fields
from aisle.catalog.stock_fields import STORE_PREFIX, encoded, inventories_of, merged, store_key
from aisle.catalog.store import CatalogNotFound, CatalogStore, Pointer
from aisle.core.stock import AVAILABILITY_FIELD, INVENTORIES_FIELD
from aisle.core.storage import BlobStore
from aisle.core.tenant_config import AttributeConfiguration, AttributeType

TIMES_FILE = "update_times.json"
DOC = "_doc"
"""The key of a product's whole-document time among its update times."""
Times = dict[str, int]
DTYPES: dict[AttributeType, Any] = {
    AttributeType.text: pl.Utf8,
    AttributeType.keyword: pl.Utf8,
    AttributeType.category_path: pl.Utf8,
    AttributeType.number: pl.Float64,
    AttributeType.integer: pl.Int64,
    AttributeType.boolean: pl.Boolean,
}


def field_time(times: Times, name: str) -> int:
    """When ``name`` last changed: its own time or the whole product's, whichever is later."""
    return max(times.get(DOC, 0), times.get(name, 0))


def latest_time(times: Times) -> int:
    """The product's newest write of any kind but a store's inventory (ordered on its own)."""
    return max((t for k, t in times.items() if not k.startswith(STORE_PREFIX)), default=0)


def store_time(times: Times | None, store_id: str) -> int:
    """When ``store_id``'s inventory entry of the product last changed (0: never, or by a whole import)."""
    return (times or {}).get(store_key(store_id), 0)


def _micros(iso: str) -> int:
    try:
        return round(datetime.fromisoformat(iso).timestamp() * 1_000_000)
    except ValueError:
        return 0


class CatalogState:
    """One tenant's products as of change-log entry :attr:`seq` (see the module docstring).

    Not thread-safe: :class:`~aisle.catalog.writer.CatalogWriter` holds one per tenant under a lock.
    """

    def __init__(
        self,
        version: str | None,
        seq: int,
        base: pl.DataFrame | None = None,
        base_times: dict[str, Times] | None = None,
        default_time: int = 0,
    ) -> None:
        self.version = version
        self.seq = seq
        self.base = base
        self._rows: dict[str, int] | None = None
        self._base_times = base_times or {}
        self._default = default_time
        self.overlay: dict[str, Fields | None] = {}
        """Products written since the base, by id (None: deleted)."""
        self.times: dict[str, Times] = {}
        """Update times of the products in :attr:`overlay`."""

    @classmethod
    def load(cls, scope: BlobStore, pointer: Pointer | None) -> CatalogState:
        """The state of the version ``pointer`` names, before any entry after it (an empty catalog at
        sequence 0 without one). Raises StorageUnavailable (503)."""
        if pointer is None:
            return cls(None, 0)
        store = CatalogStore(scope)
        try:
            base = store.load(pointer.version).products
        except CatalogNotFound:
            return cls(None, 0)
        raw = store.version_file(pointer.version, TIMES_FILE)
        doc = orjson.loads(raw) if raw else {}
        default = int(doc.get("default") or _micros(pointer.created_at))
        return cls(pointer.version, pointer.sequence, base, doc.get("times") or {}, default)

    def _row_of(self) -> dict[str, int]:
        if self._rows is None:
            ids = self.base["id"].to_list() if self.base is not None else []
            self._rows = {pid: i for i, pid in enumerate(ids)}
        return self._rows

    def product(self, product_id: str) -> Fields | None:
        """The product's fields (a copy), None when it does not exist (never did, or deleted)."""
        if product_id in self.overlay:
            found = self.overlay[product_id]
            return None if found is None else dict(found)
        row = self._row_of().get(product_id)
        if row is None or self.base is None:
            return None
        fields = self.base.row(row, named=True)
        fields.pop("id", None)
        if INVENTORIES_FIELD in fields:
            fields[INVENTORIES_FIELD] = inventories_of(fields[INVENTORIES_FIELD]) or None
        return fields

    def exists(self, product_id: str) -> bool:
        """Whether the product exists now (as :meth:`product` is not None, without reading its row)."""
        if product_id in self.overlay:
            return self.overlay[product_id] is not None
        return self.base is not None and product_id in self._row_of()

    def inventories(self, product_id: str) -> dict[str, Any] | None:
        """The product's per-store inventory (:meth:`product`'s ``inventories``) alone: a whole-product
        write keeps it, and reading only that column spares an import a row read per product."""
        if product_id in self.overlay:
            found = self.overlay[product_id]
            return None if found is None else found.get(INVENTORIES_FIELD)
        row = self._row_of().get(product_id)
        if row is None or self.base is None or INVENTORIES_FIELD not in self.base.columns:
            return None
        return inventories_of(self.base[INVENTORIES_FIELD][row]) or None

    def times_of(self, product_id: str) -> Times | None:
        """The product's update times, None for an id never written (a deleted one has its tombstone)."""
        if product_id in self.times:
            return dict(self.times[product_id])
        if product_id in self._base_times:
            return dict(self._base_times[product_id])
        return {DOC: self._default} if product_id in self._row_of() else None

    def ids(self) -> Iterator[str]:
        """The ids of the products that exist now."""
        for pid in self._row_of():
            if pid not in self.overlay:
                yield pid
        yield from (pid for pid, fields in self.overlay.items() if fields is not None)

    def apply(self, entry: Entry) -> None:
        """Apply the next entry's operations (its number is ``seq + 1``)."""
        if entry.seq != self.seq + 1:
            raise ValueError(f"change {entry.seq} applied on top of {self.seq}")
        if entry.bulk is not None:
            self.absorb(entry.bulk)
        for op in entry.ops:
            apply_op(self, op)
        self.seq = entry.seq

    def absorb(self, bulk: Bulk) -> None:
        """Apply ``bulk``'s upserts as :func:`apply_op` would one by one, as columns: the base's rows of
        those products are replaced in place (each keeps its inventories: an upsert does), new products
        appended, their times set. Products written since the base (in :attr:`overlay`) go one by one."""
        frame = bulk.frame
        if self.overlay:
            written = frame.filter(pl.col("id").is_in(list(self.overlay)))
            for op in upserts(Bulk(written, bulk.time)):
                apply_op(self, op)
            frame = frame.filter(~pl.col("id").is_in(list(self.overlay)))
        if frame.height == 0:
            return
        base = self.base if self.base is not None else frame.clear()
        base = base.with_columns(
            pl.lit(None, frame.schema[c]).alias(c) for c in frame.columns if c not in base.columns
        )
        fields = [c for c in base.columns if c not in ("id", INVENTORIES_FIELD)]
        incoming = frame.select(
            "id",
            *[
                pl.col(c).cast(base.schema[c], strict=False)
                if c in frame.columns
                else pl.lit(None, base.schema[c]).alias(c)
                for c in fields
            ],
        )
        hits = incoming.rename({c: f"{c} new" for c in fields}).with_columns(pl.lit(True).alias(" hit"))
        joined = base.join(hits, on="id", how="left", maintain_order="left")
        hit = pl.col(" hit").fill_null(False)
        replaced = joined.select(
            pl.when(hit).then(pl.col(f"{c} new")).otherwise(pl.col(c)).alias(c) if c in fields else pl.col(c)
            for c in base.columns
        )
        rows = self._row_of()
        fresh = incoming.filter(~pl.col("id").is_in(list(rows)))
        if INVENTORIES_FIELD in base.columns:
            fresh = fresh.with_columns(pl.lit(None, base.schema[INVENTORIES_FIELD]).alias(INVENTORIES_FIELD))
        self.base = pl.concat([replaced, fresh.select(base.columns)])
        for pid in fresh["id"].to_list():
            rows[pid] = len(rows)
        times = self._base_times
        for pid in incoming["id"].to_list():
            old = times.get(pid)
            stores = {k: t for k, t in old.items() if k.startswith(STORE_PREFIX)} if old else None
            times[pid] = {DOC: bulk.time, **stores} if stores else {DOC: bulk.time}

    def products_frame(self, config: AttributeConfiguration) -> pl.DataFrame:
        """Every existing product as a catalog version stores them: ``id`` then one column per attribute
        of ``config`` (typed), in base order, new products last."""
        schema = {"id": pl.Utf8, **{a.name: DTYPES[a.type] for a in config.attributes}}
        base = self.base if self.base is not None else pl.DataFrame(schema=schema)
        for name in (AVAILABILITY_FIELD, INVENTORIES_FIELD):  # stock: kept once a product has it
            if name not in schema and (
                name in base.columns or any(f and f.get(name) for f in self.overlay.values())
            ):
                schema[name] = pl.Utf8
        columns = [
            pl.col(n).cast(dtype, strict=False) if n in base.columns else pl.lit(None, dtype).alias(n)
            for n, dtype in schema.items()
        ]
        aligned = base.select(columns).with_row_index("_pos")
        kept = aligned.filter(~pl.col("id").is_in(list(self.overlay)))
        rows = self._row_of()
        written = [(pid, fields) for pid, fields in self.overlay.items() if fields is not None]
        fresh = [pid for pid, _ in written if pid not in rows]
        position = {pid: len(rows) + i for i, pid in enumerate(fresh)} | rows
        changed = pl.DataFrame(
            [
                {"id": pid, **{k: _cell(k, fields.get(k)) for k in schema if k != "id"}}
                for pid, fields in written
            ],
            schema=schema,
            orient="row",
        ).with_columns(pl.Series("_pos", [position[pid] for pid, _ in written], dtype=pl.UInt32))
        out = pl.concat([kept, changed.select(kept.columns)]).sort("_pos").drop("_pos")
        return out

    def times_file(self) -> bytes:
        """The update times of every product written (tombstones included), as a version stores them."""
        merged = {**self._base_times, **self.times}
        return orjson.dumps({"default": self._default, "times": merged})

    def store_ids(self) -> list[str]:
        """Every store id some existing product has an inventory entry for, sorted."""
        found: set[str] = set()
        if self.base is not None and INVENTORIES_FIELD in self.base.columns:
            gone = [pid for pid in self.overlay if pid in self._row_of()]
            kept = self.base.filter(~pl.col("id").is_in(gone))[INVENTORIES_FIELD].drop_nulls().unique()
            for raw in kept.to_list():
                found.update(inventories_of(raw))
        for fields in self.overlay.values():
            found.update(inventories_of((fields or {}).get(INVENTORIES_FIELD)))
        return sorted(found)


def _cell(name: str, value: Any) -> Any:
    """A product's value as a catalog version's column holds it (inventories: a JSON string)."""
    return encoded(value) if name == INVENTORIES_FIELD else value


def apply_op(state: CatalogState, op: Op) -> None:
    """Apply one decided operation to ``state`` (no staleness check: it was decided before logging).
    Inventories merge store by store, each store's entry with its own time (module docstring)."""
    given = op.fields.get(INVENTORIES_FIELD) or {}
    stamps = {store_key(s): op.time for s in given}
    if op.op == "delete":
        state.overlay[op.id] = None
        state.times[op.id] = {DOC: op.time}
        return
    if op.op == "upsert":  # the stored product's fields are not read: only its inventories stay
        exists = state.exists(op.id)
        times = (state.times_of(op.id) or {DOC: 0}) if exists else {DOC: 0}
        stored = state.inventories(op.id) if exists else None
        current = dict(op.fields)
        times = {DOC: op.time} | {k: t for k, t in times.items() if k.startswith(STORE_PREFIX)}
    else:
        previous = state.product(op.id)
        times = (state.times_of(op.id) or {DOC: 0}) if previous is not None else {DOC: 0}
        stored = (previous or {}).get(INVENTORIES_FIELD)
        current = previous or {}
        current.update(op.fields)
        times = times | dict.fromkeys((k for k in op.fields if k != INVENTORIES_FIELD), op.time)
    stores = merged(stored, given)
    if stores:
        current[INVENTORIES_FIELD] = stores
    else:
        current.pop(INVENTORIES_FIELD, None)
    state.overlay[op.id] = current
    state.times[op.id] = times | stamps
