"""What every service that shows products shares for analytics: the process's recorder, its counters in
``/metrics``, and the ``attributionToken`` each answer carries.

:func:`open_outcomes` gives a service its :class:`Outcomes` (recording per ``AISLE_ANALYTICS``) and
counts, in ``/metrics``, ``aisle_analytics_records_total{service, outcome}`` with ``outcome`` ``recorded``
or ``dropped`` (the buffer was full: the answer is served, not recorded). The service closes it at
shutdown (uvicorn's SIGTERM), which writes what is buffered.
"""

from __future__ import annotations

import time

import orjson
from fastapi import FastAPI, Request
from prometheus_client import Counter

from aisle.analytics.engine import AnalyticsEngine
from aisle.analytics.records import Answer, AnswerKind, Record, new_attribution_token
from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.experiments.assignment import join_tags, tag
from aisle.search.model import SearchResult
from aisle.search.query import SearchQuery


class Outcomes:
    """One process's analytics recording (see the module docstring).

    Args:
        engine: the analytics engine (its recorder is None when ``AISLE_ANALYTICS=false``).
        recorded: the counter of records handed over; dropped ones are counted by the recorder's hook.
    """

    def __init__(self, engine: AnalyticsEngine, recorded: Counter) -> None:
        self.engine = engine
        self.recorded = recorded

    def record(self, record: Record) -> None:
        """Hand one answer or event to the recorder (never blocks; a no-op when recording is off)."""
        recorder = self.engine.recorder
        if recorder is not None and recorder.record(record):
            self.recorded.inc()

    def search_answer(self, tenant: str, kind: AnswerKind, query: SearchQuery, result: SearchResult) -> str:
        """Give ``result`` its attribution token and record the answer; returns the token.

        Recorded: the normalised query, the filters (canonical JSON), the sort, the products shown in
        order, ``total``, the stage that answered, the rules that fired, the experiment variants
        (``queryGraph.experiments`` as ``experimentId:variantId`` tags), the visitor, the latency, and
        the guided-search question asked (its attribute) and the questions the request answered.
        """
        token = new_attribution_token()
        result.attribution_token = token
        if self.engine.recorder is None:  # recording off: the token only
            return token
        graph = result.query_graph
        filters = (
            orjson.dumps([f.model_dump(mode="json") for f in query.filters]).decode() if query.filters else ""
        )
        self.record(
            Answer(
                tenant,
                token,
                kind,
                time.time(),
                tuple(str(p.get("id", "")) for p in result.products),
                result.total,
                query=graph.normalized,
                filters=filters,
                sort=query.sort,
                stage=graph.stage,
                rules=tuple(str(r.get("id", "")) for r in graph.rules),
                variant=join_tags([tag(e.experimentId, e.variantId) for e in graph.experiments]),
                latency_ms=graph.took_ms,
                visitor_id=query.visitor_id,
                follow_up=result.follow_up.attribute if result.follow_up is not None else "",
                follow_ups_answered=graph.follow_up.answered if graph.follow_up is not None else 0,
            )
        )
        return token

    def close(self) -> None:
        self.engine.close()


def open_outcomes(app: FastAPI, service: str, settings: Settings, store: BlobStore) -> Outcomes:
    """The service's :class:`Outcomes`, kept at ``app.state.outcomes``, its counts in ``/metrics``."""
    engine = AnalyticsEngine.from_settings(settings, store)
    counter = Counter(
        "aisle_analytics_records",
        "Answers and shopper events handed to analytics: recorded, or dropped because the buffer was full.",
        ["service", "outcome"],
        registry=app.state.metrics.registry,
    )
    if engine.recorder is not None:
        engine.recorder.on_drop = counter.labels(service, "dropped").inc
    outcomes = Outcomes(engine, counter.labels(service, "recorded"))
    app.state.outcomes = outcomes
    return outcomes


def answered(
    request: Request, tenant: str, kind: AnswerKind, query: SearchQuery, result: SearchResult
) -> None:
    """Give a search-shaped answer its attribution token and record it (:meth:`Outcomes.search_answer`);
    in an app without :class:`Outcomes`, a token all the same."""
    outcomes: Outcomes | None = getattr(request.app.state, "outcomes", None)
    if outcomes is not None:
        outcomes.search_answer(tenant, kind, query, result)
    else:
        result.attribution_token = new_attribution_token()


def record(request: Request, record_: Record) -> None:
    """Hand one answer or event to the process's :class:`Outcomes` (a no-op in an app without one)."""
    outcomes: Outcomes | None = getattr(request.app.state, "outcomes", None)
    if outcomes is not None:
        outcomes.record(record_)
