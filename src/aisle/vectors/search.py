"""Vector search over a tenant's products: encode the query, apply filters, find neighbours.

Filters are the search request's own (:class:`aisle.search.model.FilterSpec`: a category path, a brand,
an in-stock boolean, a price range...), evaluated by the tenant's full-text index into the set of
products that pass, then handed to the ANN index as an allowed-key mask (see :mod:`aisle.vectors.ann`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import orjson
import tantivy

from aisle.core.errors import BadRequest
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec
from aisle.search.stages.filters import filter_clause
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


def filter_ords(index: TenantIndex, filters: list[FilterSpec]) -> np.ndarray:
    """Catalog row numbers (int64, sorted) of the products passing every filter (AND across fields).

    Raises:
        BadRequest: unknown or non-filterable field, bad value (see :mod:`aisle.search.stages.filters`).
    """
    clauses = [filter_clause(index, spec)[0] for spec in filters]
    query = (
        clauses[0]
        if len(clauses) == 1
        else tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in clauses])
    )
    limit = max(1, index.num_docs())
    hits = index.searcher.search(tantivy.Query.const_score_query(query, 1.0), limit).hits
    if not hits:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.asarray(index.ords(hits), dtype=np.int64))


class VectorSearch:
    """Text or vector queries against :class:`VectorStore` tables, with request filters.

    The MiniLM encoder is loaded on first use (one intra-op thread: many requests run in parallel);
    filter results are cached (LRU of 256 per process) since shoppers repeat the same facet clicks.
    """

    def __init__(self, store: VectorStore, encoder: TextEncoder | None = None) -> None:
        self.store = store
        self._encoder = encoder
        self._lock = threading.Lock()
        self._filters: OrderedDict[tuple[str, str, bytes], np.ndarray] = OrderedDict()
        self._ord_keys: dict[tuple[str, str], tuple[int, str, np.ndarray]] = {}
        self._probes: dict[str, ImageProbe | None] = {}
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def encoder(self) -> TextEncoder:
        if self._encoder is None:
            with self._lock:
                if self._encoder is None:
                    self._encoder = TextEncoder.load(threads=1)
        return self._encoder

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

    def _ord_to_key(self, table: VectorTable, index: TenantIndex) -> np.ndarray:
        """int64 array: catalog row -> table key (-1 when the product has no vector)."""
        slot = (str(table.path), index.tenant)
        cached = self._ord_keys.get(slot)
        if cached is not None and cached[0] == table.generation and cached[1] == index.version:
            return cached[2]
        mapping = np.asarray([table.key_of.get(row["id"], -1) for row in index.rows], dtype=np.int64)
        self._ord_keys[slot] = (table.generation, index.version, mapping)
        return mapping

    def allowed(
        self, tenant: str, index: TenantIndex, filters: list[FilterSpec], kind: str = "text"
    ) -> np.ndarray | None:
        """Allowed-key mask of ``filters`` over the tenant's ``kind`` table (None without filters)."""
        if not filters:
            return None
        table = self.store.table(tenant, kind)
        slot = (tenant, index.version, orjson.dumps([f.model_dump() for f in filters]))
        with self._lock:
            ords = self._filters.get(slot)
            if ords is not None:
                self._filters.move_to_end(slot)
        if ords is None:
            ords = filter_ords(index, filters)
            with self._lock:
                self._filters[slot] = ords
                while len(self._filters) > 256:
                    self._filters.popitem(last=False)
        keys = self._ord_to_key(table, index)[ords]
        mask = np.zeros(len(table.ids), dtype=bool)
        mask[keys[keys >= 0]] = True
        return mask

    def neighbours(
        self,
        tenant: str,
        index: TenantIndex | None,
        *,
        text: str | None = None,
        vector: np.ndarray | None = None,
        k: int = 20,
        filters: list[FilterSpec] | None = None,
        kind: str = "text",
        exclude: set[str] | None = None,
    ) -> list[Neighbour]:
        """The ``k`` (<= 1000) nearest products to ``text`` (encoded) or ``vector``, passing ``filters``.

        Raises:
            BadRequest: neither or both of text/vector; filters without a full-text index; bad filters.
            VectorIndexMissing (503): no table of ``kind`` for the tenant.
        """
        if (text is None) == (vector is None):
            raise BadRequest("give exactly one of 'text' and 'vector'", code="vector_query_invalid")
        if not 1 <= k <= MAX_K:
            raise BadRequest(f"k must be 1..{MAX_K}", code="vector_query_invalid")
        self.store.table(tenant, kind)  # 503 before paying for the embedding
        if text is not None:
            if kind != "text":
                raise BadRequest("text queries search the text vectors only", code="vector_query_invalid")
            vector = self.encode(text)
        if kind == "image":
            vector = self.image_query(tenant, np.asarray(vector, dtype=np.float32).reshape(-1))
        allowed = None
        if filters:
            if index is None:
                raise BadRequest("filters need the tenant's catalog index", code="filter_unavailable")
            allowed = self.allowed(tenant, index, filters, kind)
        extra = len(exclude) if exclude else 0
        ids, scores = self.store.search(tenant, vector, k + extra, kind=kind, allowed=allowed)  # type: ignore[arg-type]
        out = [
            Neighbour(pid, float(s))
            for pid, s in zip(ids, scores, strict=True)
            if not exclude or pid not in exclude
        ]
        return out[:k]
