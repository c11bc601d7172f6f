"""Text vectors that follow the catalog: what a product write changes is embedded in the background.

A product write (``PUT``/``PATCH``/``DELETE /products/{id}``, a batch, an import; issue 41) is an entry
of the tenant's catalog change log (:mod:`aisle.catalog.changes`). :class:`CatalogEmbedder` reads the
entries a tenant's text vectors have not followed yet and writes what they change through the vector
write log (:mod:`aisle.vectors.writes`), which every search and vector-search replica applies:

- a product an entry creates or replaces, or patches in one of its text fields (the searchable
  attributes, :func:`~aisle.vectors.build.text_fields`), is embedded from its text as stored now (the
  last catalog version plus the log) and upserted; a patch of other fields (a price, the stock) embeds
  nothing;
- a deleted product's vector is deleted.

So a new product has a vector, and with it semantic and hybrid search and similar items (cold start),
seconds after its write, without rebuilding the table. How far a tenant's vectors have followed is the
*cursor*, ``vector-writes/text/catalog-cursor.json`` = ``{"sequence": n}`` in its bucket scope, written
after the vectors: a process that stops between the two embeds those products again, never skips one.

A tenant followed for the first time starts from the sequence its table's catalog version includes,
when that version is the current one. When the table is older than the current version (compaction
folded writes into a version since), or the cursor fell behind the entries compaction pruned (up to the
version before the current one: the service was down through two compactions), what changed cannot be
read from the log: the embedder builds the tenant's table for the current catalog version (``rebuild``,
:func:`~aisle.vectors.build.build_text_vectors`, which embeds only the products whose text is new) and
follows on from the sequence that version includes. A tenant without a text table is left alone: its
first build embeds every product.

Two vector-search replicas may embed the same change: the second upsert writes the same vector.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import orjson

from aisle.catalog.changes import ChangeLog, Entry
from aisle.catalog.store import CatalogStore
from aisle.catalog.writer import CatalogWriter
from aisle.core.errors import AisleError, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.tenancy import Tenants
from aisle.vectors.build import product_text, text_fields
from aisle.vectors.store import VectorStore

log = logging.getLogger("aisle.vectors")

CURSOR = "vector-writes/text/catalog-cursor.json"
MIN_ROUND_S = 0.2
"""The shortest pause between two rounds (a check interval of 0 means "look every time" to a store)."""
Encode = Callable[[list[str]], np.ndarray]
"""Texts to unit vectors, shape (len(texts), dimension)."""


@dataclass(frozen=True)
class Followed:
    """One catch-up of a tenant: ``embedded`` products upserted, ``deleted`` vectors removed,
    ``sequence`` the cursor after it, ``rebuilt`` whether the table was built anew (a gap)."""

    embedded: int = 0
    deleted: int = 0
    sequence: int = 0
    rebuilt: bool = False


class CatalogEmbedder:
    """Keeps every tenant's text vectors up with its catalog change log (see the module docstring).

    Args:
        tenants: the tenants and their bucket scopes.
        store: the vector store writes go through (its write log in the bucket).
        encode: MiniLM embedding of texts (the vector service's loaded encoder).
        rebuild: builds ``tenant``'s text table for its current catalog version (a cursor behind the
            log's pruned entries).
    """

    def __init__(
        self, tenants: Tenants, store: VectorStore, encode: Encode, rebuild: Callable[[str], object]
    ) -> None:
        self.tenants = tenants
        self.store = store
        self.encode = encode
        self.rebuild = rebuild
        self.writer = CatalogWriter(tenants)
        self._cursors: dict[str, int] = {}

    def catch_up(self, tenant: str) -> Followed:
        """Embed and delete what the entries after the tenant's cursor change; returns what was done.

        Raises:
            StorageUnavailable (503): the bucket failed; the cursor stays where it was.
            VectorIndexMissing (503): the table went away meanwhile.
        """
        if not self.store.has(tenant, "text"):
            return Followed()
        scope = self.tenants.scope(tenant)
        cursor = self._cursor(tenant, scope)
        if cursor is None:  # never followed: from the sequence of the version the table was built from
            pointer = CatalogStore(scope).pointer()
            if pointer is None or pointer.version != self.store.table(tenant, "text").version:
                return self._rebuild(tenant, scope)  # the table is older: which products changed is unknown
            cursor = pointer.sequence
            self._save_cursor(tenant, scope, cursor)
        entries = ChangeLog(scope).after(cursor)
        if not entries:
            head = ChangeLog(scope).head()
            if head <= cursor:
                return Followed(sequence=cursor)
            return self._rebuild(tenant, scope)  # the next entry was pruned: a gap
        embedded, deleted = self._apply(tenant, entries)
        self._save_cursor(tenant, scope, entries[-1].seq)
        return Followed(embedded, deleted, entries[-1].seq)

    def _apply(self, tenant: str, entries: list[Entry]) -> tuple[int, int]:
        names = text_fields(self.tenants.config(tenant).attributes)
        texts = set(names)
        touched: dict[str, bool] = {}  # id -> whether its text may have changed
        for entry in entries:
            for op in entry.operations:
                changed = op.op != "patch" or bool(texts & op.fields.keys())
                touched[op.id] = touched.get(op.id, False) or changed
        upsert: dict[str, str] = {}
        gone: list[str] = []
        for product_id, changed in touched.items():
            try:
                fields = self.writer.product(tenant, product_id).fields
            except NotFound:
                gone.append(product_id)
                continue
            if changed:
                upsert[product_id] = product_text(fields.get(name) for name in names)
        if upsert:
            ids = list(upsert)
            self.store.upsert(tenant, ids, self.encode([upsert[i] for i in ids]), kind="text")
        removed = self.store.delete(tenant, gone, kind="text") if gone else 0
        return len(upsert), removed

    def _rebuild(self, tenant: str, scope: BlobStore) -> Followed:
        pointer = CatalogStore(scope).pointer()  # before the build: it embeds at least this version
        log.warning(
            "%s: which products changed since its text vectors cannot be read from the catalog "
            "change log; building them for the current catalog version",
            tenant,
        )
        self.rebuild(tenant)
        sequence = pointer.sequence if pointer is not None else 0
        self._save_cursor(tenant, scope, sequence)
        return Followed(sequence=sequence, rebuilt=True)

    def _cursor(self, tenant: str, scope: BlobStore) -> int | None:
        """The sequence the tenant's vectors have followed, None when never followed."""
        if tenant not in self._cursors:
            try:
                self._cursors[tenant] = int(orjson.loads(scope.get(CURSOR))["sequence"])
            except BlobNotFound:
                return None
        return self._cursors[tenant]

    def _save_cursor(self, tenant: str, scope: BlobStore, sequence: int) -> None:
        scope.put(CURSOR, orjson.dumps({"sequence": sequence}))
        self._cursors[tenant] = sequence

    def run(self, stop: threading.Event, every: float) -> None:
        """Catch every tenant up every ``every`` seconds (at least :data:`MIN_ROUND_S`) until ``stop`` is
        set; a tenant's failure is logged and tried again next round."""
        while not stop.wait(max(every, MIN_ROUND_S)):
            try:
                tenants = self.tenants.names()
            except AisleError as exc:  # the bucket is down: the next round looks again
                log.warning("catalog vectors not followed this round: %s", exc.message)
                continue
            for tenant in tenants:
                try:
                    done = self.catch_up(tenant)
                except AisleError as exc:
                    log.warning("%s: catalog vectors not followed this round: %s", tenant, exc.message)
                    continue
                if done.embedded or done.deleted:
                    log.info("%s: %d products embedded, %d deleted", tenant, done.embedded, done.deleted)
