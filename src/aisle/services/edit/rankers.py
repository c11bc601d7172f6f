"""The edit service's ``train_ranker`` job: a tenant's search ranker learned from its shoppers' behaviour.

The job (``POST /rankers/train``, polled at ``GET /jobs/{jobId}``) refreshes the tenant's behaviour
features from its analytics log (:func:`aisle.analytics.behaviour_store.refresh`: the click table and
the position propensities estimated from it), trains a debiased click ranker on them, with the
behaviour features
(:func:`aisle.search.training.clicks.train_click_ranker`), saves it as the next ranker version
(``source: behaviour``) and puts it in use only above the traffic threshold
(:func:`aisle.search.training.clicks.may_deploy`). The search service picks the new version up within
its ranker check interval. Idempotent: a retried attempt trains and saves one more version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aisle.analytics.behaviour_store import BehaviourStore, refresh
from aisle.analytics.log import ParquetLog
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, PrefixBlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.jobs import Job, JobHandler, Progress
from aisle.search.ranking.behaviour import BehaviourTables
from aisle.search.training.clicks import ClickLog, train_click_ranker

TRAIN_RANKER = "train_ranker"


def click_log(store: BlobStore, tenant: str, version: int) -> ClickLog:
    """The trainer's input from behaviour ``version`` of ``tenant``."""
    behaviour = BehaviourStore(store)
    record = next(r for r in [behaviour.current(tenant)] if r is not None and r.version == version)
    table = behaviour.table(tenant, "clicks", version)
    return ClickLog(
        table["query"].to_pylist(),
        table["product_id"].to_pylist(),
        table["position"].to_numpy(),
        table["impressions"].to_numpy(),
        table["clicks"].to_numpy(),
        record.propensities,
        record.searches,
        record.clicks,
    )


def train_ranker_handler(settings: Settings, store: BlobStore) -> JobHandler:
    """The ``train_ranker`` job's handler over the bucket ``store`` (indexes under ``settings.data_dir``)."""
    tenants = Tenants(store)

    def handle(_: PrefixBlobStore, job: Job, progress: Progress) -> dict[str, Any]:
        progress(5, "refreshing behaviour features from the analytics log")
        log = ParquetLog(store, Path(settings.data_dir) / "analytics")
        behaviour = refresh(log, job.tenant)
        progress(
            30, f"behaviour v{behaviour.version}: {behaviour.searches} searches, {behaviour.clicks} clicks"
        )
        record, deployed = train_click_ranker(
            tenants,
            job.tenant,
            Path(settings.data_dir),
            click_log(store, job.tenant, behaviour.version),
            progress=lambda line: progress(60, line),
            behaviour=BehaviourTables(store, check_every=0).current(job.tenant),
        )
        return {
            "rankerVersion": record.version,
            "deployed": deployed,
            "behaviourVersion": behaviour.version,
            "searches": behaviour.searches,
            "clicks": behaviour.clicks,
            "propensities": behaviour.propensities,
            "propensityPairs": behaviour.propensity_pairs,
            "propensityAcrossArms": behaviour.propensity_across_arms,
        }

    return handle
