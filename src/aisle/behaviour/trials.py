"""A click-trained ranker's trial: an A/B experiment, the live setting against the new version, decides
whether it goes live.

The traffic threshold (:func:`aisle.search.training.clicks.may_deploy`) keeps thin logs out, but past it
a ranker learned from clicks can still be slightly worse than the one in use (issue 30's simulated
runs: -0.010 to +0.017 NDCG@10 at 1M searches). The proof that it is better is an A/B test on the
tenant's own shoppers, so with ``deploy=experiment`` (the ``train_ranker`` job's default) the job:

1. **judges** every running *ranker trial* (:func:`trial_version`: a running search experiment of two
   variants, the control with no changes and the treatment changing only the ranker version) once both
   arms have the visitors a fixed-horizon test needs (:func:`needed_visitors`): the treatment is
   promoted (its ranker goes live) when it is the experiment's winner on click-through rate, and the
   trial is stopped otherwise (no significant gain, a loss, or a sample ratio mismatch). Judging only
   at the horizon, never earlier, means re-running the job does not peek (each trial is one test at
   the 5% level, the results endpoint's own statistics: :mod:`aisle.experiments.analysis`);
2. trains and saves the next version, never putting it in use itself;
3. **starts a trial** for it, 50/50 by visitor, when the log is past the traffic threshold and no
   earlier trial is still collecting visitors.

So running the job on a schedule (say daily) trains, tests, then promotes or rejects, one version at a
time. The merchandising console shows a trial like any experiment; it can be stopped or promoted by
hand. ``deploy=threshold`` is the old behaviour (in use past the threshold, no test); ``deploy=never``
only saves.
"""

from __future__ import annotations

from typing import Any, Literal

from aisle.analytics.engine import AnalyticsEngine
from aisle.experiments.admin import ExperimentAdmin
from aisle.experiments.model import Experiment, ExperimentBody
from aisle.experiments.statistics import sample_size

DeployMode = Literal["experiment", "threshold", "never"]
TREATMENT = "ranker"
"""The treatment variant id of the trials the job starts (a trial started by hand may name it otherwise)."""
DEFAULT_MDE = 0.05
"""Relative click-through lift a trial is sized to detect (5%: at a 40% click-through rate, about
9,500 visitors per arm at 80% power)."""


def trial_version(experiment: Experiment) -> int | None:
    """The ranker version ``experiment`` tries, when it is a running ranker trial (see module
    docstring), else None. A merchandiser's own "live setting vs ranker vN" experiment counts too."""
    if experiment.status != "running" or experiment.surface != "search" or len(experiment.variants) != 2:
        return None
    control, treatment = experiment.variants
    changes = treatment.changes
    if control.changes.changes_search() or control.changes.containers:
        return None
    only_ranker = not (changes.rulesOff or changes.rulesOn or changes.hybrid or changes.settings)
    return changes.ranker if only_ranker and isinstance(changes.ranker, int) else None


def needed_visitors(control_ctr: float | None, mde: float) -> int | None:
    """Visitors per arm a two-sided test at 5% with 80% power needs to see a relative lift ``mde`` of
    the control's click-through rate (:func:`aisle.experiments.statistics.sample_size`, the rate taken
    as a proportion of visitors: conservative, as most visitors search more than once); None while the
    rate is 0, 1 or unknown (no visitors yet)."""
    if control_ctr is None:
        return None
    try:
        return sample_size(control_ctr, mde)
    except ValueError:
        return None


def judge(
    admin: ExperimentAdmin, analytics: AnalyticsEngine, tenant: str, experiment: Experiment, version: int
) -> dict[str, Any]:
    """Judge one running trial (see module docstring): promote, stop or leave it running.

    Returns ``{experimentId, rankerVersion, outcome, visitors: [control, treatment], neededVisitors,
    lift, pValue}`` with ``outcome`` one of ``collecting`` (left running), ``promoted``, ``rejected``
    (stopped: no significant gain) or ``invalid`` (stopped: sample ratio mismatch).
    """
    results = analytics.experiment_results(tenant, experiment)
    control, treatment = results["variants"]
    versus = treatment["vsControl"]["clickThroughRate"]
    needed = needed_visitors(control["clickThroughRate"]["value"], experiment.minimumDetectableEffect)
    visitors = [control["visitors"], treatment["visitors"]]
    verdict: dict[str, Any] = {
        "experimentId": experiment.id,
        "rankerVersion": version,
        "visitors": visitors,
        "neededVisitors": needed,
        "lift": versus["lift"],
        "pValue": versus["pAdjusted"],
    }
    if needed is None or min(visitors) < needed:
        return verdict | {"outcome": "collecting"}
    if results["sampleRatio"]["mismatch"]:
        admin.stop(tenant, experiment.id)
        return verdict | {"outcome": "invalid"}
    treatment_id = experiment.variants[1].id
    if results["winner"] == treatment_id:
        admin.promote(tenant, experiment.id, treatment_id)
        return verdict | {"outcome": "promoted"}
    admin.stop(tenant, experiment.id)
    return verdict | {"outcome": "rejected"}


def judge_running(admin: ExperimentAdmin, analytics: AnalyticsEngine, tenant: str) -> list[dict[str, Any]]:
    """Judge every running ranker trial of ``tenant``, oldest first (see :func:`judge`)."""
    verdicts = []
    for experiment in sorted(admin.store(tenant).list(), key=lambda e: e.createdAt):
        version = trial_version(experiment)
        if version is not None:
            verdicts.append(judge(admin, analytics, tenant, experiment, version))
    return verdicts


def start_trial(admin: ExperimentAdmin, tenant: str, version: int, mde: float = DEFAULT_MDE) -> Experiment:
    """Store and start a trial of ranker ``version`` against the live setting, 50/50 by visitor,
    primary metric click-through rate, sized for a relative lift ``mde``."""
    body = ExperimentBody.model_validate(
        {
            "name": f"Ranker trial: v{version} (learned from clicks)",
            "description": "Started by the train_ranker job: the new click-trained ranker against the live "
            "setting. The next job run after both arms have the visitors the test needs promotes it on a "
            "significant click-through gain and stops the trial otherwise.",
            "primaryMetric": "clickThroughRate",
            "minimumDetectableEffect": mde,
            "variants": [
                {"id": "control", "name": "Live setting"},
                {"id": TREATMENT, "name": f"Ranker v{version}", "changes": {"ranker": version}},
            ],
        }
    )
    draft = admin.create(tenant, body)
    return admin.start(tenant, draft.id)
