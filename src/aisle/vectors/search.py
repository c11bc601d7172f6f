"""Vector search over a tenant's products: encode the query, mask the table, find neighbours.

This layer knows vectors, tables and product ids only. Request filters are evaluated above it (the
search engine turns them into catalog rows with its full-text index) and arrive here as a
:class:`RowSelection`: the catalog rows that pass, which :meth:`VectorSearch.mask` turns into the
table's allowed-key mask (see :mod:`aisle.vectors.ann`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from aisle.core.errors import BadRequest, ErrorCode
from aisle.vectors.image_build import load_probe
from aisle.vectors.image_probe import ImageProbe
from aisle.vectors.store import VectorStore
from aisle.vectors.table import VectorTable
from aisle.vectors.text_encoder import TextEncoder

MAX_K = 1000
QUERY_CACHE = 4096


@dataclass(frozen=True)
class Neighbour:
    """A product id and its cosine similarity to the query (-1..1)."""

    id: str
    score: float


class CatalogRows(Protocol):
    """A catalog version's rows: ``version`` names them, :meth:`product_ids` gives the id of each row.

    Rows of one name are only ever appended to (a search index following the change log numbers the
    products written since its version after the version's rows): a longer list under the same name
    starts with the shorter one."""

    @property
    def version(self) -> str: ...

    def product_ids(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class RowSelection:
    """The products a filter let through: ``rows`` (int64, sorted) are row numbers of ``catalog``."""

    catalog: CatalogRows
    rows: np.ndarray


class VectorSearch:
    """Text or vector queries against :class:`VectorStore` tables, with request filters.

    The MiniLM encoder is loaded on first use (one intra-op thread: many requests run in parallel).
    """

    def __init__(self, store: VectorStore, encoder: TextEncoder | None = None) -> None:
        self.store = store
        self._encoder = encoder
        self._lock = threading.Lock()
        self._ord_keys: dict[str, tuple[int, str, np.ndarray]] = {}
        self._probes: dict[str, ImageProbe | None] = {}
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    def entry_count(self) -> int:
        """Query embeddings held."""
        return len(self._queries)

    @property
    def encoder(self) -> TextEncoder:
        if self._encoder is None:
            with self._lock:
                if self._encoder is None:
                    self._encoder = TextEncoder.load(threads=1, models_dir=self.store.data_dir / "models")
        return self._encoder

    def index(
        self,
        tenant: str,
        items: Sequence[tuple[str, Sequence[float] | None, str | None]],
        *,
        kind: str = "text",
    ) -> int:
        """Insert or replace products' vectors: each item is ``(id, vector, text)``, its vector given or,
        for text vectors, embedded from ``text`` (MiniLM, in one batch). Returns how many were written,
        durable as :meth:`VectorStore.upsert` says.

        Raises:
            BadRequest: a text for a photo table (``vector_query_invalid``); a vector whose length is
                not the table's (``vector_dimension_mismatch``); what :meth:`VectorStore.upsert` raises.
            VectorIndexMissing (503): the tenant has no ``kind`` table.
        """
        table = self.store.table(tenant, kind)
        texts = [text for _, vector, text in items if vector is None and text is not None]
        if texts and kind != "text":
            raise BadRequest(
                "only text vectors can be computed from a text", code=ErrorCode.VECTOR_QUERY_INVALID
            )
        embedded = iter(self.encoder.encode(texts)) if texts else iter(())
        rows = []
        for product_id, vector, _ in items:
            if vector is None:
                rows.append(next(embedded))
                continue
            if len(vector) != table.dimension:
                raise BadRequest(
                    f"item '{product_id}': {len(vector)} values, the table has {table.dimension}",
                    code=ErrorCode.VECTOR_DIMENSION_MISMATCH,
                )
            rows.append(np.asarray(vector, dtype=np.float32))
        return self.store.upsert(
            tenant, [product_id for product_id, _, _ in items], np.stack(rows), kind=kind
        )

    def encode(self, text: str) -> np.ndarray:
        """MiniLM embedding of ``text``: float32, shape (384,), unit length.

        Kept in an LRU of :data:`QUERY_CACHE` texts: head queries repeat, and embedding one costs a few
        milliseconds of CPU.
        """
        with self._lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        vector = self.encoder.encode([text])[0]
        vector.setflags(write=False)
        with self._lock:
            self._queries[text] = vector
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector

    def embeds_with_model(self, tenant: str, encoder_of: Callable[[str], str]) -> bool:
        """Whether the tenant's searches embed their queries with MiniLM (:meth:`encode_query`): it has a
        text table, and its encoder (``encoder_of(tenant)``, read only then) is "minilm" or the table has
        no static query encoder. Opens the table (:meth:`VectorStore.has`)."""
        if not self.store.has(tenant):
            return False
        return encoder_of(tenant) != "static" or self.store.table(tenant).query is None

    def encode_query(self, table: VectorTable, text: str, encoder: str = "static") -> np.ndarray:
        """``text``'s query vector for ``table``: float32, (384,), unit length. ``encoder`` "static"
        uses the table's static query encoder (tens of microseconds;
        :mod:`aisle.vectors.query_encoder`) when it has one, otherwise, or with "minilm", MiniLM
        (:meth:`encode`)."""
        if encoder == "static" and table.query is not None:
            return table.query.encode(text)
        return self.encode(text)

    def image_query(self, tenant: str, features: np.ndarray) -> np.ndarray:
        """Raw EfficientNet features (1280,) -> the tenant's image search vector (its probe applied).

        A vector already of the table's dimension is returned as it is.
        """
        table = self.store.table(tenant, "image")
        key = str(table.path)
        if key not in self._probes:
            self._probes[key] = load_probe(table)
        probe = self._probes[key]
        if probe is not None and features.shape[0] == probe.weights.shape[0] != table.dimension:
            return probe.transform(features[None, :] / max(float(np.linalg.norm(features)), 1e-12))[0]
        return features

    def row_keys(self, table: VectorTable, catalog: CatalogRows) -> np.ndarray:
        """int64 array, one per catalog row: its key in ``table`` (-1 when the product has no vector).

        Kept per table until the table or the rows' name changes; rows appended under the same name
        (:class:`CatalogRows`) extend it by theirs alone. Read-only.
        """
        slot = str(table.path)  # one table per tenant and kind: one mapping each, the latest
        cached = self._ord_keys.get(slot)
        ids = catalog.product_ids()
        if cached is not None and cached[0] == table.generation and cached[1] == catalog.version:
            known = cached[2]
            if len(known) >= len(ids):
                return known
            tail = np.asarray(
                [table.key_of.get(ids[o], -1) for o in range(len(known), len(ids))], dtype=np.int64
            )
            mapping = np.concatenate([known, tail])
        else:
            mapping = np.asarray([table.key_of.get(pid, -1) for pid in ids], dtype=np.int64)
        mapping.setflags(write=False)
        self._ord_keys[slot] = (table.generation, catalog.version, mapping)
        return mapping

    def mask(self, tenant: str, selection: RowSelection, kind: str = "text") -> np.ndarray:
        """Allowed-key mask (bool, one per table key) of the products in ``selection``.

        Raises:
            VectorIndexMissing (503): no table of ``kind`` for the tenant.
        """
        table = self.store.table(tenant, kind)
        keys = self.row_keys(table, selection.catalog)[selection.rows]
        mask = np.zeros(len(table.ids), dtype=bool)
        mask[keys[keys >= 0]] = True
        return mask

    def check(self, tenant: str, *, text: str | None, vector: object | None, k: int, kind: str) -> None:
        """Refuse a malformed query, and a tenant without a ``kind`` table, before any work is paid for.

        Raises:
            BadRequest: neither or both of text/vector, ``k`` outside 1..1000, text against photos.
            VectorIndexMissing (503): no table of ``kind`` for the tenant.
        """
        if (text is None) == (vector is None):
            raise BadRequest("give exactly one of 'text' and 'vector'", code=ErrorCode.VECTOR_QUERY_INVALID)
        if not 1 <= k <= MAX_K:
            raise BadRequest(f"k must be 1..{MAX_K}", code=ErrorCode.VECTOR_QUERY_INVALID)
        self.store.table(tenant, kind)  # 503 before paying for the embedding
        if text is not None and kind != "text":
            raise BadRequest("text queries search the text vectors only", code=ErrorCode.VECTOR_QUERY_INVALID)

    def neighbours(
        self,
        tenant: str,
        *,
        text: str | None = None,
        vector: np.ndarray | None = None,
        k: int = 20,
        kind: str = "text",
        allowed: np.ndarray | None = None,
        exclude: set[str] | None = None,
    ) -> list[Neighbour]:
        """The ``k`` (<= 1000) nearest products to ``text`` (encoded) or ``vector``, within ``allowed``.

        ``allowed`` is a mask from :meth:`mask` (None: every product); ``exclude`` ids are left out.

        Raises:
            BadRequest, VectorIndexMissing: see :meth:`check`.
        """
        self.check(tenant, text=text, vector=vector, k=k, kind=kind)
        if text is not None:
            vector = self.encode(text)
        if kind == "image":
            vector = self.image_query(tenant, np.asarray(vector, dtype=np.float32).reshape(-1))
        extra = len(exclude) if exclude else 0
        ids, scores = self.store.search(tenant, vector, k + extra, kind=kind, allowed=allowed)  # type: ignore[arg-type]
        out = [
            Neighbour(pid, float(s))
            for pid, s in zip(ids, scores, strict=True)
            if not exclude or pid not in exclude
        ]
        return out[:k]
