"""Loaded models for the predict service: deployment check, loading, and an in-process cache.

A model is loaded once per (tenant, model id, deployment) and kept while that deployment is current;
a redeploy (for example of a retrained model) loads the registry's current record on the next request.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol

from aisle.core.storage import BlobStore
from aisle.recs.deployments import (
    STATE_TTL_S,
    Deployments,
    Loader,
    ModelNotDeployed,
    ModelTraining,
    default_loader,
)
from aisle.recs.models.base import ModelType, Recommender
from aisle.recs.registry import ModelRecord, ModelRegistry


@dataclass(frozen=True)
class ServedModel:
    """A model ready to answer: its record fields and the loaded recommender."""

    model_id: str
    model_type: ModelType
    version: int
    recommender: Recommender
    metrics: dict[str, float] = field(default_factory=dict)


class ModelSource(Protocol):
    """Where the predict engine gets models from."""

    def served(
        self, tenant: str, scope: BlobStore, model_id: str, *, require_deployed: bool = True
    ) -> ServedModel:
        """The loaded model. Raises ModelNotFound (404), ModelNotDeployed (409) or ModelTraining (503:
        announced by a background build, not trained yet)."""
        ...

    def records(self, tenant: str, scope: BlobStore) -> list[ModelRecord]:
        """Every model record of the tenant."""
        ...

    def cached(self, tenant: str, model_id: str) -> ServedModel | None:
        """The loaded, deployed model when that is known without I/O (fresh cached state), else None."""
        ...


class RegistryModelSource:
    """Models from the tenant's registry, loaded with ``loader`` and cached.

    Args:
        loader: builds a recommender from a record (default:
            :func:`aisle.recs.deployments.default_loader`, the artifact with the tenant's catalog).
        state_ttl_s: how stale a cached deployment state may be (seconds).
    """

    def __init__(self, loader: Loader | None = None, *, state_ttl_s: float = STATE_TTL_S) -> None:
        self.loader = loader if loader is not None else default_loader()
        self.state_ttl_s = state_ttl_s
        self._models: dict[tuple[str, str, str | None], ServedModel] = {}
        self._deployments: dict[str, Deployments] = {}
        self._locks: dict[tuple[str, str, str | None], threading.Lock] = {}
        self._guard = threading.Lock()

    def entry_count(self) -> int:
        """Models held loaded."""
        return len(self._models)

    def _deps(self, tenant: str, scope: BlobStore) -> Deployments:
        deps = self._deployments.get(tenant)
        if deps is None:
            deps = self._deployments[tenant] = Deployments(scope)
        return deps

    def served(
        self, tenant: str, scope: BlobStore, model_id: str, *, require_deployed: bool = True
    ) -> ServedModel:
        dep = self._deps(tenant, scope).get(model_id, max_age_s=self.state_ttl_s)
        if require_deployed and (dep is None or dep.status != "deployed"):
            if dep is not None and dep.status == "training":
                raise ModelTraining(
                    f"model '{model_id}' is being trained in the background; try again shortly",
                    details={"modelId": model_id},
                )
            ModelRegistry(scope).get(model_id)  # 404 first when the model does not exist at all
            raise ModelNotDeployed(f"model '{model_id}' is not deployed", details={"modelId": model_id})
        # keyed by the deployment that loaded it: a redeploy (new job) loads the current record again
        key = (tenant, model_id, dep.jobId if dep is not None and dep.status == "deployed" else None)
        cached = self._models.get(key)
        if cached is not None:
            return cached
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one load per model, concurrent requests wait for it
            cached = self._models.get(key)
            if cached is not None:
                return cached
            record = ModelRegistry(scope).get(model_id)
            model = ServedModel(
                model_id=record.model_id,
                model_type=record.model_type,
                version=record.version,
                recommender=self.loader(scope, record),
                metrics=dict(record.metrics),
            )
            for old in [k for k in self._models if k[:2] == key[:2]]:
                del self._models[old]
            self._models[key] = model
            return model

    def records(self, tenant: str, scope: BlobStore) -> list[ModelRecord]:
        return ModelRegistry(scope).list()

    def cached(self, tenant: str, model_id: str) -> ServedModel | None:
        deps = self._deployments.get(tenant)
        dep = None if deps is None else deps.cached(model_id, max_age_s=self.state_ttl_s)
        if dep is None or dep.status != "deployed":
            return None
        return self._models.get((tenant, model_id, dep.jobId))
