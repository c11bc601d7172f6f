"""Deployment state of models (which models the predict service serves), and the deploy/undeploy jobs.

Registry records are immutable; whether a model is served is separate state, one small document per
model in the tenant's scope: ``models/deployments/<model_id>.json``. The predict service reads it
(cached for at most :data:`STATE_TTL_S` seconds), so a deploy is picked up without a restart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from aisle.catalog.store import Catalog, CatalogNotFound, CatalogStore
from aisle.core.errors import Conflict, ErrorCode, Unavailable
from aisle.core.storage import BlobNotFound, BlobStore, PrefixBlobStore
from aisle.core.validation import is_resource_id
from aisle.recs.containers import ContainerStore
from aisle.recs.jobs import Job, JobHandler, Progress
from aisle.recs.models.base import RecContext, Recommender
from aisle.recs.registry import ModelRecord, ModelRegistry

DEPLOY_DIR = "models/deployments"
STATE_TTL_S = 1.0
WARM_SEEDS = 3
"""Products a model is warmed with before it is marked deployed."""


class ModelNotDeployed(Conflict):
    code = ErrorCode.MODEL_NOT_DEPLOYED


class ModelTraining(Unavailable):
    """503 ``model_training``: the model is announced (status ``training``) but not trained yet."""

    code = ErrorCode.MODEL_TRAINING
    retry_after = 30


class ModelInUse(Conflict):
    code = ErrorCode.MODEL_IN_USE


class Deployment(BaseModel):
    """Serving state of one model."""

    modelId: str
    status: Literal["deployed", "undeployed", "training"] = Field(
        description="training: announced by a background build that has not deployed it yet "
        "(predict answers 503 model_training meanwhile)."
    )
    modelVersion: int = Field(description="Registry version that was loaded and warmed.")
    jobId: str | None = None
    updatedAt: datetime = Field(default_factory=lambda: datetime.now(UTC))


class Deployments:
    """Read and write the deployment state of one tenant's models."""

    def __init__(self, scope: BlobStore) -> None:
        self.scope = scope
        self._cache: dict[str, tuple[float, Deployment | None]] = {}

    def get(self, model_id: str, *, max_age_s: float = 0.0) -> Deployment | None:
        """The model's state, or None when it was never deployed (cached up to ``max_age_s``)."""
        now = time.monotonic()
        hit = self._cache.get(model_id)
        if hit is not None and now - hit[0] <= max_age_s:
            return hit[1]
        if not is_resource_id(model_id):
            return None  # no model has such an id; not cached, so hostile ids cannot grow the cache
        try:
            raw = self.scope.get(f"{DEPLOY_DIR}/{model_id}.json")
            dep: Deployment | None = Deployment.model_validate_json(raw)
        except BlobNotFound:
            dep = None
        if len(self._cache) >= 4096:  # bounded: model ids come from requests
            self._cache.clear()
        self._cache[model_id] = (now, dep)
        return dep

    def cached(self, model_id: str, *, max_age_s: float) -> Deployment | None:
        """The cached state when younger than ``max_age_s``, else None (no I/O)."""
        hit = self._cache.get(model_id)
        if hit is not None and time.monotonic() - hit[0] <= max_age_s:
            return hit[1]
        return None

    def is_deployed(self, model_id: str, *, max_age_s: float = 0.0) -> bool:
        dep = self.get(model_id, max_age_s=max_age_s)
        return dep is not None and dep.status == "deployed"

    def deployed_ids(self) -> list[str]:
        """Ids of the tenant's models whose state is ``deployed``."""
        ids = [
            p.rsplit("/", 1)[-1][: -len(".json")]
            for p in self.scope.list(DEPLOY_DIR + "/")
            if p.endswith(".json")
        ]
        return sorted(m for m in ids if self.is_deployed(m))

    def write(self, dep: Deployment) -> None:
        self.scope.put(f"{DEPLOY_DIR}/{dep.modelId}.json", dep.model_dump_json().encode())
        self._cache.pop(dep.modelId, None)

    def require_deployed(self, model_ids: list[str]) -> None:
        """Raises :class:`ModelNotDeployed` (409) naming every model of ``model_ids`` not deployed."""
        missing = [m for m in model_ids if not self.is_deployed(m)]
        if missing:
            raise ModelNotDeployed(
                f"models not deployed: {', '.join(missing)}; deploy them before attaching them",
                details={"modelIds": missing},
            )


def refuse_if_attached(scope: BlobStore, model_id: str) -> None:
    """Raises :class:`ModelInUse` (409) naming the containers that use ``model_id``."""
    using = ContainerStore(scope).using_model(model_id)
    if using:
        raise ModelInUse(
            f"model '{model_id}' is attached to containers: {', '.join(using)}; detach it first",
            details={"modelId": model_id, "containers": using},
        )


Loader = Callable[[BlobStore, ModelRecord], Recommender]
"""Builds the recommender of a registry record in a tenant scope (deploy jobs, the predict service)."""


def catalog_or_none(scope: BlobStore) -> Catalog | None:
    """The tenant's current catalog, or None when it has none (models that need it say so)."""
    try:
        return CatalogStore(scope).load()
    except CatalogNotFound:
        return None


def default_loader(catalog_of: Callable[[BlobStore], Any] = catalog_or_none) -> Loader:
    """``aisle.recs.loading.load_recommender`` with the tenant's current catalog (None if it has none).

    The model modules are imported on the first load, not when a service starts.
    """

    def load(scope: BlobStore, record: ModelRecord) -> Recommender:
        from aisle.recs.loading import load_recommender

        return load_recommender(scope, record, catalog=catalog_of(scope))  # type: ignore[arg-type]

    return load


def catalog_warm_seeds(scope: BlobStore) -> list[str]:
    """The first :data:`WARM_SEEDS` product ids of the tenant's catalog (none without a catalog)."""
    catalog = catalog_or_none(scope)
    if catalog is None:
        return []
    return [str(x) for x in catalog.products.get_column("id").head(WARM_SEEDS).to_list()]


def warm_up(recommender: Recommender, seeds: list[str]) -> int:
    """Run a few requests (20 items per seed) so lazy structures are built before traffic arrives.

    Returns the items served, summed over ``seeds``: the deploy job's ``warmupItems``.
    """
    served = 0
    for seed in seeds:
        served += len(recommender.recommend(RecContext(seeds=[seed], k=20)))
    return served


def deploy_handler(
    load: Loader | None = None, warm_seeds: Callable[[BlobStore], list[str]] = catalog_warm_seeds
) -> JobHandler:
    """The ``deploy`` job: load the model's artifact, warm it, then mark it deployed (idempotent).

    Args:
        load: how to load a record (default: :func:`default_loader`).
        warm_seeds: the products to warm the model with (default: :func:`catalog_warm_seeds`).

    The job's result: ``{modelVersion, loadSeconds, warmupItems}`` (:func:`warm_up`).
    """
    load = load if load is not None else default_loader()

    def run(scope: PrefixBlobStore, job: Job, progress: Progress) -> dict[str, Any]:
        model_id = str(job.modelId)
        progress(10, "reading the model record")
        record = ModelRegistry(scope).get(model_id)
        progress(30, f"loading artifact {record.artifact_uri}")
        started = time.perf_counter()
        recommender = load(scope, record)
        loaded_s = time.perf_counter() - started
        progress(70, "warming up")
        served = warm_up(recommender, warm_seeds(scope))
        Deployments(scope).write(
            Deployment(modelId=model_id, status="deployed", modelVersion=record.version, jobId=job.jobId)
        )
        return {"modelVersion": record.version, "loadSeconds": round(loaded_s, 3), "warmupItems": served}

    return run


def undeploy_handler() -> JobHandler:
    """The ``undeploy`` job: refuse while attached (checked again at run time), else mark undeployed."""

    def run(scope: PrefixBlobStore, job: Job, progress: Progress) -> dict[str, Any]:
        model_id = str(job.modelId)
        progress(20, "checking containers")
        refuse_if_attached(scope, model_id)
        record = ModelRegistry(scope).get(model_id)
        Deployments(scope).write(
            Deployment(modelId=model_id, status="undeployed", modelVersion=record.version, jobId=job.jobId)
        )
        return {"modelVersion": record.version}

    return run
