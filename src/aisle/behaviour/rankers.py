"""The ``train_ranker`` job: a tenant's search ranker learned from its shoppers' behaviour.

The behaviour engine hands the job to the edit service's job runner
(:meth:`aisle.behaviour.engine.BehaviourEngine.job_handlers`); submitted with ``POST /rankers/train`` and
polled at ``GET /jobs/{jobId}``, it refreshes the tenant's behaviour
features from its analytics log (:func:`aisle.behaviour.store.refresh`: the click table and
the position propensities estimated from it), trains a debiased click ranker on them, with the
behaviour features (:func:`aisle.search.training.clicks.train_click_ranker`), and saves it as the next
ranker version (``source: behaviour``). What happens next is the job's ``deploy`` mode:

- ``experiment`` (default): running ranker trials are judged first (promoted or stopped once they have
  their visitors), then, past the traffic threshold (:func:`aisle.search.training.clicks.may_deploy`),
  the new version is put on trial against the live setting as an A/B experiment; it goes live only by
  winning it (:mod:`aisle.behaviour.trials`);
- ``threshold``: put in use directly past the traffic threshold;
- ``never``: saved only.

The search service picks a version put in use up within its ranker check interval. Idempotent: a
retried attempt trains and saves one more version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aisle.analytics.engine import AnalyticsEngine
from aisle.analytics.log import ParquetLog
from aisle.behaviour.store import BehaviourStore, refresh
from aisle.behaviour.trials import DEFAULT_MDE, judge_running, start_trial
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, PrefixBlobStore
from aisle.core.tenancy import Tenants
from aisle.experiments.admin import ExperimentAdmin
from aisle.recs.jobs import Job, JobHandler, Progress
from aisle.search.experiment_promotion import SearchPromotion
from aisle.search.ranking.behaviour import BehaviourTables
from aisle.search.ranking.store import RankerStore
from aisle.search.training.clicks import ClickLog, may_deploy, train_click_ranker

TRAIN_RANKER = "train_ranker"


def click_log(store: BlobStore, tenant: str, version: int) -> ClickLog:
    """The trainer's input from behaviour ``version`` of ``tenant`` (per query, product and position:
    impressions and clicks; the propensities and totals of that version).

    Raises:
        StopIteration: ``version`` is not the tenant's current behaviour version.
        BlobNotFound: its ``clicks`` table is missing.
    """
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
    """The ``train_ranker`` job's handler over the bucket ``store`` (indexes under ``settings.data_dir``).

    Job params: ``deploy`` (``experiment``, ``threshold`` or ``never``; see module docstring) and
    ``minimumDetectableEffect`` (the relative click-through lift a new trial is sized for).
    """
    tenants = Tenants(store)
    admin = ExperimentAdmin(tenants, [SearchPromotion(tenants, RankerStore(store, check_every=0))])

    def handle(_: PrefixBlobStore, job: Job, progress: Progress) -> dict[str, Any]:
        mode = job.params.get("deploy", "experiment")
        verdicts: list[dict[str, Any]] = []
        if mode == "experiment":
            progress(2, "judging running ranker trials")
            analytics = AnalyticsEngine.from_settings(settings, store, record=False)
            verdicts = judge_running(admin, analytics, job.tenant)
        progress(5, "refreshing behaviour features from the analytics log")
        log = ParquetLog(store, Path(settings.data_dir) / "analytics")
        behaviour = refresh(log, job.tenant)
        progress(
            30, f"behaviour v{behaviour.version}: {behaviour.searches} searches, {behaviour.clicks} clicks"
        )
        clicks = click_log(store, job.tenant, behaviour.version)
        record, deployed = train_click_ranker(
            tenants,
            job.tenant,
            Path(settings.data_dir),
            clicks,
            use=mode == "threshold",
            progress=lambda line: progress(60, line),
            behaviour=BehaviourTables(store, check_every=0).current(job.tenant),
        )
        trial = None
        collecting = any(v["outcome"] == "collecting" for v in verdicts)
        if mode == "experiment" and not collecting and may_deploy(clicks.searches, clicks.total_clicks):
            mde = float(job.params.get("minimumDetectableEffect", DEFAULT_MDE))
            started = start_trial(admin, job.tenant, record.version, mde)
            trial = {"experimentId": started.id, "rankerVersion": record.version}
        return {
            "rankerVersion": record.version,
            "deployed": deployed,
            "deploy": mode,
            "trial": trial,
            "judgedTrials": verdicts,
            "behaviourVersion": behaviour.version,
            "searches": behaviour.searches,
            "clicks": behaviour.clicks,
            "propensities": behaviour.propensities,
            "propensityPairs": behaviour.propensity_pairs,
            "propensityAcrossArms": behaviour.propensity_across_arms,
        }

    return handle
