"""Learned rankers per tenant in object storage: immutable versions and a pointer to the one in use.

Layout in the tenant's scope::

    search/rankers/v<version>/model.txt   LightGBM text model, immutable, written first
    search/rankers/v<version>/meta.json   RankerRecord (features, training figures), written second
    search/rankers/current.json           {"version": N}, written last; absent: no ranker in use

A pointer is written only after its version's files exist, so a reader that finds a pointer finds
the model. Search processes re-read the pointer at most every ``check_every`` seconds and load a
version once (versions never change).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from pydantic import BaseModel, Field

from aisle.core.errors import ErrorCode, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.signature import read_object
from aisle.core.storage.versions import claim_version
from aisle.core.tenancy import tenant_scope
from aisle.search.ranking.behaviour import BEHAVIOUR_FEATURES, BehaviourTables
from aisle.search.ranking.compiled import CompiledModel

if TYPE_CHECKING:
    import lightgbm

log = logging.getLogger("aisle.search")
RANKER_DIR = "search/rankers"
POINTER = f"{RANKER_DIR}/current.json"


class RankerNotFound(NotFound):
    code = ErrorCode.RANKER_NOT_FOUND


class RankerRecord(BaseModel):
    """What one trained ranker version is: its features and how it scored when trained."""

    version: int
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    features: list[str]
    queries: int = Field(description="Judged queries it was trained on.")
    candidates: int = Field(description="Candidate rows (query, product) it was trained on.")
    cv_ndcg10: float | None = Field(None, description="Mean NDCG@10 of K-fold cross-validation by query.")
    baseline_ndcg10: float | None = Field(None, description="NDCG@10 of the pipeline without the ranker.")
    folds: int = 0
    catalog_version: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    source: str = Field(
        default="judgments", description="What it learned from: judgments, or behaviour (clicks)."
    )
    traffic: dict[str, int] | None = Field(
        default=None, description="For a ranker learned from behaviour: the searches and clicks of its log."
    )
    rerank_depth: int | None = Field(
        default=None,
        ge=1,
        description="How many of the pipeline's first candidates it reorders (the rest follow in the "
        "pipeline's order): for a ranker learned from clicks, the depth shoppers were shown in its log, "
        "the only rows it has labels for. None: every candidate (a ranker learned from judgments).",
    )


class Ranker:
    """A loaded ranker: ``score(features (n, F) float32) -> (n,) float64``, higher ranks first;
    ``order`` applies it within its record's ``rerank_depth``."""

    def __init__(
        self, record: RankerRecord, booster: lightgbm.Booster, compiled: CompiledModel | None = None
    ) -> None:
        self.record = record
        self.booster = booster
        self.compiled = compiled
        self._columns: dict[tuple[str, ...], np.ndarray | slice | None] = {}

    @property
    def version(self) -> int:
        return self.record.version

    @property
    def uses_behaviour(self) -> bool:
        """Whether its features end with the behaviour features (:mod:`aisle.search.ranking.behaviour`)."""
        return self.feature_names()[-len(BEHAVIOUR_FEATURES) :] == list(BEHAVIOUR_FEATURES)

    def feature_names(self) -> list[str]:
        """The features it was trained on, in its columns' order: its record's, else (a record saved
        without them) the names LightGBM kept in the model."""
        return list(self.record.features) or list(self.booster.feature_name())

    def columns(self, computed: Sequence[str]) -> np.ndarray | slice | None:
        """Where its features are among the ``computed`` columns of a search (names in the order
        :func:`~aisle.search.ranking.features.candidate_features` and the behaviour features fill them),
        to index the feature matrix's columns with: ``slice(None)`` when they are exactly those (a view,
        no copy), else (F,) int64 indices in its own order. None when it was trained on a feature this
        code no longer computes: such a model is retrained, never fed other columns. Features are only
        ever added at the end, so a model trained before some were added reads the columns it knows.
        Worked out once per ``computed`` tuple."""
        key = tuple(computed)
        if key not in self._columns:
            where = {name: j for j, name in enumerate(key)}
            found = [where.get(name) for name in self.feature_names()]
            picked: np.ndarray | slice | None
            if any(j is None for j in found):
                picked = None
                gone = sorted(name for name, j in zip(self.feature_names(), found, strict=True) if j is None)
                log.warning(
                    "ranker v%d was trained on features this version does not compute (%s): searches keep "
                    "the pipeline's order until it is retrained",
                    self.version,
                    ", ".join(gone),
                )
            elif found == list(range(len(key))):
                picked = slice(None)
            else:
                picked = np.asarray(found, dtype=np.int64)
            self._columns[key] = picked
        return self._columns[key]

    def score(self, features: np.ndarray) -> np.ndarray:
        """Scores of ``features`` (n, F): the compiled model's once it is ready
        (:mod:`aisle.search.ranking.compiled`, the same scores to 1e-6), LightGBM's until then."""
        predict = self.compiled.predictor() if self.compiled is not None else None
        if predict is not None:
            return predict(features)
        return np.asarray(self.booster.predict(features, num_threads=1), dtype=np.float64)

    def order(self, features: np.ndarray, served: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The candidates' new order and scores within the record's ``rerank_depth`` (see
        :func:`depth_order`)."""
        return depth_order(self.score, features, served, self.record.rerank_depth)


def depth_order(
    score: Callable[[np.ndarray], np.ndarray],
    features: np.ndarray,
    served: np.ndarray | None,
    depth: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Rerank candidates with ``score`` (features (m, F) -> (m,) float64) within ``depth``.

    ``features`` (n, F) float32 rows of the candidates, ``served`` (n,) int64 their order without a
    ranker (None: row order). Returns ``(order (n,) int64 row indices, scores (n,) float64)``. With a
    ``depth`` d < n, only the first d served rows are scored and reordered; the rest keep the served
    order after them, scored below every reordered row (from its lowest score - 1, falling by 1 / n per
    row), so the scores still fall along the order. ``depth`` None: every row.
    """
    n = len(features)
    if depth is None or depth >= n:
        scores = score(features)
        return np.argsort(-scores, kind="stable"), scores
    served = np.arange(n) if served is None else served
    head = served[:depth]
    scores = np.empty(n)
    scores[head] = score(features[head])
    scores[served[depth:]] = scores[head].min() - 1.0 - np.arange(n - depth) / n
    return np.concatenate([head[np.argsort(-scores[head], kind="stable")], served[depth:]]), scores


def _booster(model_text: str) -> lightgbm.Booster:
    import lightgbm

    return lightgbm.Booster(model_str=model_text)


class RankerStore:
    """Save, list, switch and load tenants' rankers (see module docstring)."""

    def __init__(
        self, store: BlobStore, check_every: float = 2.0, *, compiled_dir: Path | None = None
    ) -> None:
        self.store = store
        self.check_every = check_every
        self.compiled_dir = compiled_dir
        """Where this host keeps rankers compiled for serving (None: LightGBM scores,
        :mod:`aisle.search.ranking.compiled`)."""
        self._lock = threading.Lock()
        self._pointers: dict[str, tuple[float, int | None]] = {}
        self._loaded: dict[tuple[str, int], Ranker] = {}
        self.behaviour = BehaviourTables(store)
        """The tenants' behaviour features, for rankers that use them."""

    def entry_count(self) -> int:
        """Rankers held loaded."""
        return len(self._loaded)

    def _scope(self, tenant: str) -> BlobStore:
        return tenant_scope(self.store, tenant)

    def versions(self, tenant: str) -> list[RankerRecord]:
        """Every saved version of the tenant's ranker, oldest first."""
        scope = self._scope(tenant)
        records = []
        for name in scope.list_dirs(RANKER_DIR):
            if name.startswith("v") and name[1:].isdigit():
                try:
                    records.append(
                        RankerRecord.model_validate_json(scope.get(f"{RANKER_DIR}/{name}/meta.json"))
                    )
                except BlobNotFound:
                    continue  # a version still being written
        return sorted(records, key=lambda r: r.version)

    def in_use(self, tenant: str) -> int | None:
        """The version the tenant's searches use, or None."""
        try:
            return int(orjson.loads(read_object(self._scope(tenant), POINTER))["version"])
        except BlobNotFound:
            return None

    def save(self, tenant: str, model_text: str, record: RankerRecord, *, use: bool = True) -> RankerRecord:
        """Write a new version (model first, then its record), then point searches at it when ``use``.

        ``record.version`` is replaced by the next free version number.
        """
        scope = self._scope(tenant)
        version = claim_version(scope, RANKER_DIR, "model.txt", model_text.encode())
        record = record.model_copy(update={"version": version})
        scope.put(f"{RANKER_DIR}/v{version}/meta.json", record.model_dump_json(indent=2).encode())
        if use:
            self.use(tenant, version)
        return record

    def use(self, tenant: str, version: int | None) -> None:
        """Point the tenant's searches at ``version``; None turns the learned ranker off.

        Raises:
            RankerNotFound: no such version.
        """
        scope = self._scope(tenant)
        if version is None:
            scope.delete(POINTER)
        else:
            if not scope.exists(f"{RANKER_DIR}/v{version}/meta.json"):
                raise RankerNotFound(f"tenant '{tenant}' has no ranker version {version}")
            scope.put(POINTER, orjson.dumps({"version": version}))
        with self._lock:
            self._pointers.pop(tenant, None)

    def load(self, tenant: str, version: int) -> Ranker:
        """One version, loaded once per process.

        Raises:
            RankerNotFound: no such version.
        """
        key = (tenant, version)
        ranker = self._loaded.get(key)
        if ranker is not None:
            return ranker
        scope = self._scope(tenant)
        try:
            record = RankerRecord.model_validate_json(scope.get(f"{RANKER_DIR}/v{version}/meta.json"))
            text = scope.get(f"{RANKER_DIR}/v{version}/model.txt").decode()
        except BlobNotFound as exc:
            raise RankerNotFound(f"tenant '{tenant}' has no ranker version {version}") from exc
        compiled = CompiledModel(text, self.compiled_dir) if self.compiled_dir is not None else None
        ranker = Ranker(record, _booster(text), compiled)
        with self._lock:
            self._loaded[key] = ranker
        return ranker

    def may_be_in_use(self, tenant: str) -> bool:
        """Whether the tenant's searches may use a ranker, from what is held in memory only (no
        storage read, no model load): False once the last look found none, True otherwise."""
        cached = self._pointers.get(tenant)
        return cached is None or cached[1] is not None

    def current(self, tenant: str) -> Ranker | None:
        """The ranker the tenant's searches use now, or None (pointer re-read every ``check_every`` s)."""
        now = time.monotonic()
        cached = self._pointers.get(tenant)
        if cached is None or now - cached[0] >= self.check_every:
            cached = (now, self.in_use(tenant))
            with self._lock:
                self._pointers[tenant] = cached
        version = cached[1]
        if version is None:
            return None
        try:
            return self.load(tenant, version)
        except RankerNotFound:
            return None
