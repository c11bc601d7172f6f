"""Deploy the demo recommendation models and create the demo containers (``make run`` / ``aisle demo``).

Containers, one slot of 20 items each, with ids scripts can rely on (each model type's demo placement
in the model-type table, :mod:`aisle.recs.model_types`):

=========  ===================  ===========================
tenant     container            model type
=========  ===================  ===========================
fashion    similar-items        SIMILAR_ITEMS
fashion    good-better-best     GOOD_BETTER_BEST
default    bought-together      FREQUENTLY_BOUGHT_TOGETHER
default    bundles              BUNDLE_RECOMMENDATIONS
yoochoose  also-viewed          CUSTOMERS_ALSO_VIEW
=========  ===================  ===========================

Idempotent: a model already deployed at its registry version is not reloaded, and a container that
already binds the right model is left as it is (otherwise it is replaced, keeping its version history).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.core.tenancy import tenant_scope
from aisle.recs.containers import ContainerBody, ContainerNotFound, ContainerStore
from aisle.recs.deployments import (
    Deployment,
    Deployments,
    Loader,
    catalog_warm_seeds,
    default_loader,
    warm_up,
)
from aisle.recs.jobs import Job, JobStatus, JobStore
from aisle.recs.model_types import MODEL_TYPES, default_model_id
from aisle.recs.models.base import ModelType, Recommender
from aisle.recs.registry import ModelRecord

log = logging.getLogger("aisle.recs.demo")

DEMO_CONTAINERS: dict[str, list[tuple[str, ModelType]]] = {}
"""Tenant -> its demo containers ``(container id, model type)``, from the rows' demo placements."""
for _row in MODEL_TYPES.values():
    if _row.demo is not None:
        DEMO_CONTAINERS.setdefault(_row.demo.tenant, []).append((_row.demo.container_id, _row.model_type))
ITEMS = 20
HEAVY_TYPES = tuple(t for t, row in MODEL_TYPES.items() if row.needs_embeddings)
"""Model types the background builder trains (:mod:`aisle.demo.builder`): they need the embeddings."""


@dataclass(frozen=True)
class DemoContainer:
    tenant: str
    container_id: str
    model_id: str
    version: int


def deploy_model(store: BlobStore, record: ModelRecord, loader: Loader) -> Recommender | None:
    """Load, warm and mark ``record`` deployed, unless it already is at this version.

    Returns the loaded recommender (None when it was already deployed and not reloaded).
    """
    scope = tenant_scope(store, record.tenant)
    deployments = Deployments(scope)
    current = deployments.get(record.model_id)
    if current is not None and current.status == "deployed" and current.modelVersion == record.version:
        return None
    started = time.perf_counter()
    recommender = loader(scope, record)
    warm_up(recommender, catalog_warm_seeds(scope))
    # A completed job record, so the deployment's jobId answers GET /jobs/{jobId} like any deploy.
    job = Job(
        jobId=f"demo-{record.model_id}-v{record.version}"[:128],
        tenant=record.tenant,
        kind="deploy",
        modelId=record.model_id,
        status=JobStatus.completed,
        percent=100,
        message=f"deployed by the demo build (model version {record.version})",
        attempt=1,
        result={"modelVersion": record.version},
    )
    JobStore(scope, record.tenant).save(job)
    deployments.write(
        Deployment(modelId=record.model_id, status="deployed", modelVersion=record.version, jobId=job.jobId)
    )
    log.info("deployed %s/%s v%d in %.1f s", record.tenant, record.model_id, record.version,
             time.perf_counter() - started)  # fmt: skip
    return recommender


def deploy_demo(
    store: BlobStore,
    settings: Settings,
    records_by_tenant: dict[str, list[ModelRecord]],
    *,
    loader: Loader | None = None,
    progress: Callable[[str], None] = print,
) -> list[DemoContainer]:
    """Deploy the demo models and create or update the demo containers.

    Args:
        store: the root object store.
        settings: process settings (unused today; kept so callers need not change when deployment
            grows, e.g. to warm a remote predict service).
        records_by_tenant: tenant -> its trained records (from :func:`aisle.demo.recs.train_demo_models`).
        loader: how to load a model (default: ``aisle.recs.loading.load_recommender``).
        progress: receives one line per deployed model and container (``aisle demo`` prints them).

    Returns:
        The demo containers that exist afterwards. A tenant without a model of a container's type is
        skipped with a warning.
    """
    del settings
    load = loader or default_loader()
    out: list[DemoContainer] = []
    for tenant, wanted in DEMO_CONTAINERS.items():
        records = records_by_tenant.get(tenant, [])
        for container_id, model_type in wanted:
            record = next((r for r in reversed(records) if r.model_type is model_type), None)
            if record is None:
                progress(
                    f"recs: tenant '{tenant}' has no {model_type.value} model; "
                    f"container {container_id} skipped"
                )
                continue
            started = time.perf_counter()
            loaded = deploy_model(store, record, load)
            state = (
                f"deployed in {time.perf_counter() - started:.1f} s"
                if loaded is not None
                else "already deployed"
            )
            container = ensure_container(store, tenant, container_id, record.model_id)
            out.append(container)
            progress(f"recs: {tenant}/{record.model_id} v{record.version} {state}; container "
                     f"{container_id} v{container.version}")  # fmt: skip
    return out


def announce_heavy(store: BlobStore, tenants: list[str]) -> list[DemoContainer]:
    """Create the containers of the models the background builder trains (SIMILAR_ITEMS), bound to
    their model id, and mark each model ``training`` unless it is deployed already: until the builder
    deploys it, predict on the container answers 503 ``model_training`` instead of 404.
    """
    out = []
    for tenant in tenants:
        for container_id, model_type in DEMO_CONTAINERS.get(tenant, []):
            if model_type not in HEAVY_TYPES:
                continue
            model_id = default_model_id(model_type)
            deployments = Deployments(tenant_scope(store, tenant))
            current = deployments.get(model_id)
            if current is None or current.status != "deployed":
                deployments.write(Deployment(modelId=model_id, status="training", modelVersion=0))
            out.append(ensure_container(store, tenant, container_id, model_id))
    return out


def ensure_container(store: BlobStore, tenant: str, container_id: str, model_id: str) -> DemoContainer:
    """Create the one-slot container, or replace it when it binds another model."""
    containers = ContainerStore(tenant_scope(store, tenant))
    body = ContainerBody.model_validate(
        {
            "name": container_id.replace("-", " ").capitalize(),
            "description": f"Demo container served by {model_id}",
            "slotConfigurations": [{"slotConfigId": "main", "modelId": model_id, "itemCount": ITEMS}],
        }
    )
    try:
        current = containers.get(container_id)
    except ContainerNotFound:
        created = containers.create(container_id, body)
        return DemoContainer(tenant, container_id, model_id, created.version)
    if [(s.modelId, s.itemCount) for s in current.slotConfigurations] == [(model_id, ITEMS)]:
        return DemoContainer(tenant, container_id, model_id, current.version)
    replaced = containers.replace(container_id, body, current.version)
    return DemoContainer(tenant, container_id, model_id, replaced.version)
