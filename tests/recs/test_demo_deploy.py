"""The demo build deploys like the edit service does: its deployments name jobs that exist."""

from __future__ import annotations

import polars as pl
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.storage import BlobStore
from aisle.core.tenancy import tenant_scope
from aisle.demo.containers import deploy_model
from aisle.recs.deployments import Deployments
from aisle.recs.jobs import JobStatus, JobStore
from aisle.recs.models.base import ModelType

PRODUCTS = pl.DataFrame({"id": ["p0", "p1", "p2"], "title": ["a", "b", "c"]})


def test_a_demo_deployment_names_a_completed_job(blob_store: BlobStore) -> None:
    write_tenant(blob_store, "shop", PRODUCTS)
    record = register_and_deploy(blob_store, "shop", "also", ModelType.CUSTOMERS_ALSO_VIEW, deploy=False)
    loaded = deploy_model(blob_store, record, lambda scope, rec: CooccurrenceRecommender([["p0", "p1"]]))
    assert loaded is not None
    scope = tenant_scope(blob_store, "shop")
    deployment = Deployments(scope).get("also")
    assert deployment is not None and deployment.status == "deployed"
    job = JobStore(scope, "shop").get(deployment.jobId)
    assert job.status == JobStatus.completed and job.percent == 100 and job.modelId == "also"
    assert deploy_model(blob_store, record, lambda scope, rec: CooccurrenceRecommender([])) is None
