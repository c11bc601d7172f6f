"""An experiment's results from the analytics log: each variant's visitors, then the statistics.

Answers carry the variants they served (``variant``: ``experimentId:variantId`` tags); the events that
followed them are attributed as in every report (:mod:`aisle.analytics.attribution`). Each visitor's
answers, clicked answers, conversions and revenue are summed per variant and handed to
:func:`aisle.experiments.analysis.analyse` (the visitor is the unit of analysis). Clients reach it
through the experiments front door (:meth:`~aisle.experiments.admin.ExperimentAdmin.results`), whose
:class:`~aisle.experiments.admin.ResultsSource` is the analytics engine: it lives here, not in
``experiments``, because reading the log is analytics' job and experiments sits below it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from aisle.analytics.reports import AnalyticsReports
from aisle.experiments.analysis import analyse
from aisle.experiments.model import Experiment
from aisle.experiments.statistics import VisitorTotals


def variant_totals(
    reports: AnalyticsReports, tenant: str, experiment: Experiment, end: float | None = None
) -> dict[str, VisitorTotals]:
    """Per variant id, the per-visitor totals of ``experiment`` from its start to its stop (or ``end``,
    default now). An experiment never started has none."""
    if experiment.startedAt is None:
        return {}
    start = experiment.startedAt.timestamp()
    stop = experiment.stoppedAt.timestamp() if experiment.stoppedAt is not None else (end or time.time())
    kind = "search" if experiment.surface == "search" else "recommendations"
    rows = reports.experiment_visitors(tenant, start, max(stop, start + 1e-3), experiment.id, kind)
    grouped: dict[str, list[tuple[int, int, int, float]]] = {}
    for variant, _visitor, answers, clicked, conversions, revenue in rows:
        grouped.setdefault(variant, []).append((answers, clicked, conversions, revenue))
    out = {}
    for variant, values in grouped.items():
        a = np.array(values, dtype=np.float64)
        out[variant] = VisitorTotals(a[:, 0], a[:, 1], a[:, 2], a[:, 3])
    return out


def experiment_results(
    reports: AnalyticsReports, tenant: str, experiment: Experiment, end: float | None = None
) -> dict[str, Any]:
    """The results body (see :func:`~aisle.experiments.analysis.analyse`) plus the period read."""
    body = analyse(experiment, variant_totals(reports, tenant, experiment, end))
    body["experimentId"] = experiment.id
    body["status"] = experiment.status
    body["simulated"] = experiment.simulated
    return body
