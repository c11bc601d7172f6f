"""What every service that shows products shares for analytics: the process's recorder, its counters in
``/metrics``, and the ``attributionToken`` each answer carries.

:func:`open_outcomes` gives a service its :class:`~aisle.analytics.engine.AnalyticsEngine` (recording
per ``AISLE_ANALYTICS``) and counts, in ``/metrics``, ``aisle_analytics_records_total{service, outcome}``
with ``outcome`` ``recorded`` or ``dropped`` (the buffer was full: the answer is served, not recorded).
The service closes it at shutdown (uvicorn's SIGTERM), which writes what is buffered.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from prometheus_client import Counter

from aisle.analytics.engine import AnalyticsEngine
from aisle.analytics.records import Record
from aisle.core.config import Settings
from aisle.core.storage import BlobStore


def open_outcomes(app: FastAPI, service: str, settings: Settings, store: BlobStore) -> AnalyticsEngine:
    """The service's analytics engine, kept at ``app.state.outcomes``, its counts in ``/metrics``."""
    engine = AnalyticsEngine.from_settings(settings, store)
    counter = Counter(
        "aisle_analytics_records",
        "Answers and shopper events handed to analytics: recorded, or dropped because the buffer was full.",
        ["service", "outcome"],
        registry=app.state.metrics.registry,
    )
    recorded, dropped = counter.labels(service, "recorded"), counter.labels(service, "dropped")
    if engine.recorder is not None:
        engine.recorder.on_drop = dropped.inc
    app.state.outcomes = engine
    app.state.outcomes_recorded = recorded
    return engine


def record(request: Request, record_: Record) -> None:
    """Hand one answer or event to the process's recorder (never blocks; a no-op without one)."""
    engine: AnalyticsEngine | None = getattr(request.app.state, "outcomes", None)
    if engine is None or engine.recorder is None:
        return
    if engine.recorder.record(record_):
        request.app.state.outcomes_recorded.inc()
