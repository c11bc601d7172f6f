"""Prometheus metrics of a service (``GET /metrics``, text exposition format), with prometheus-client.

Series (every one labelled ``service``):

* ``aisle_http_request_duration_seconds{method, route, status}``: a histogram of request latency, from
  the request's arrival to the end of its response; its ``_count`` is the request count. ``route`` is
  the route's template (``/containers/{container_id}``), never the raw path, or ``unmatched``; a method
  outside the standard ones is ``other``.
* ``aisle_tenant_requests_total{operation, tenant}``: searches and predictions per tenant, counted on
  the routes that declare :func:`count_tenant`. ``tenant`` is a tenant this process has loaded; any
  other name (unknown, mistyped, hostile) is counted as ``_other``, so the label stays bounded.
* ``aisle_cache_entries{cache}``: entries held by each in-process cache, read at scrape time
  (:meth:`ServiceMetrics.add_caches`).
* anything a component adds with :meth:`ServiceMetrics.add_gauge` or :meth:`ServiceMetrics.register`
  (a breaker's state, say), also read at scrape time.

With several worker processes (``aisle serve`` sets ``PROMETHEUS_MULTIPROC_DIR`` for search and
predict), the request and tenant series are prometheus-client's multiprocess files, so a scrape sums
every worker; scrape-time gauges describe the worker that answers the scrape (each worker has its own
caches). In one process (tests, one worker), the series are the app's own registry.
"""

from __future__ import annotations

import logging
import os
import struct
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from aisle.core.auth.dependencies import request_tenants

log = logging.getLogger("aisle.metrics")
SCRAPE_ATTEMPTS = 4
"""Reads of the workers' metric files per scrape. A whole-suite run once answered a scrape 500 just after
``aisle serve`` started its two workers (the service log was not kept); the likely cause is
prometheus-client's multiprocess collector reading a file another worker is creating that moment, its
first bytes not written yet, which the next read finds whole."""

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Latency buckets, seconds: search answers in milliseconds, the slowest admin calls in seconds."""
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
OTHER_TENANT = "_other"  # cannot be a tenant name: those start with a letter or digit
TENANT_KEY = "aisle.metrics.tenant"

GaugeRead = Callable[[], Mapping[tuple[str, ...], float] | float]
"""A scrape-time gauge's reader: one value, or values by label values (in the order of ``labels``)."""


class ScrapeGauges:
    """A prometheus Collector of gauges read from their sources when scraped (never on requests)."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.gauges: list[tuple[str, str, tuple[str, ...], GaugeRead]] = []

    def collect(self) -> Iterable[GaugeMetricFamily]:
        for name, documentation, labels, read in self.gauges:
            family = GaugeMetricFamily(name, documentation, labels=("service", *labels))
            try:
                values = read()
            except Exception:  # one broken reader must not take /metrics down
                log.warning("metric %s could not be read", name, exc_info=True)
                continue
            if isinstance(values, Mapping):
                for key, value in values.items():
                    family.add_metric([self.service, *key], float(value))
            else:
                family.add_metric([self.service], float(values))
            yield family


class ServiceMetrics:
    """The metrics of one service app (``app.state.metrics``).

    Args:
        service: the ``service`` label.
        known_tenant: whether a tenant name is one this process has loaded (no I/O), e.g.
            :meth:`aisle.core.tenancy.Tenants.known`; without it every tenant is ``_other``.
    """

    def __init__(self, service: str, *, known_tenant: Callable[[str], bool] | None = None) -> None:
        self.service = service
        self.known_tenant = known_tenant
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        self.registry = CollectorRegistry()
        self.latency = Histogram(
            "aisle_http_request_duration_seconds",
            "HTTP request latency, from arrival to the end of the response; _count counts requests.",
            ["service", "method", "route", "status"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.tenant_requests = Counter(
            "aisle_tenant_requests",
            "Searches and predictions per tenant (tenants this process does not know: _other).",
            ["service", "operation", "tenant"],
            registry=self.registry,
        )
        self.gauges = ScrapeGauges(service)
        self.caches: dict[str, Callable[[], int]] = {}
        self.add_gauge(
            "aisle_cache_entries",
            "Entries held by an in-process cache (of the worker answering the scrape).",
            lambda: {(name,): size() for name, size in self.caches.items()},
            labels=("cache",),
        )
        self.collectors: list[Collector] = [self.gauges]
        self.registry.register(self.gauges)
        # label children by label values: .labels() costs a lock and a dict build on every call
        self._latency: dict[tuple[str, str, int], Any] = {}
        self._tenants: dict[tuple[str, str], Any] = {}

    # -- on every request (MetricsMiddleware) -----------------------------------------------------

    def observe(self, scope: dict[str, Any], status: int, seconds: float) -> None:
        route = scope.get("route")
        method = scope["method"] if scope["method"] in METHODS else "other"
        key = (method, getattr(route, "path", UNMATCHED), status)
        child = self._latency.get(key)
        if child is None:
            child = self._latency[key] = self.latency.labels(self.service, key[0], key[1], str(status))
        child.observe(seconds)
        counted = scope.get(TENANT_KEY)
        if counted is not None:
            self.count_tenant(*counted)

    def count_tenant(self, operation: str, tenant: str) -> None:
        """One more ``operation`` for ``tenant`` (``_other`` unless :attr:`known_tenant` knows it)."""
        if self.known_tenant is None or not self.known_tenant(tenant):
            tenant = OTHER_TENANT
        key = (operation, tenant)
        child = self._tenants.get(key)
        if child is None:
            child = self._tenants[key] = self.tenant_requests.labels(self.service, operation, tenant)
        child.inc()

    # -- read at scrape time ----------------------------------------------------------------------

    def add_caches(self, sizes: Mapping[str, Callable[[], int]]) -> None:
        """Expose caches' entry counts as ``aisle_cache_entries{cache=<name>}``, read at scrape time.

        ``sizes`` maps a cache's name to a function counting its entries (e.g.
        :meth:`aisle.search.engine.SearchEngine.cache_sizes`); a name given again replaces the first.
        """
        self.caches.update(sizes)

    def add_gauge(self, name: str, documentation: str, read: GaugeRead, labels: Sequence[str] = ()) -> None:
        """Add a gauge whose value(s) ``read()`` returns at scrape time; ``service`` is added to ``labels``.

        The way for a component to show its state without touching prometheus-client, e.g. a breaker::

            app.state.metrics.add_gauge(
                "aisle_search_fallback_breaker_open", "1 while the tenant's breaker is open.",
                lambda: {(t,): float(s == "open") for t, s in breaker.states().items()},
                labels=("tenant",),
            )
        """
        self.gauges.gauges.append((name, documentation, tuple(labels), read))

    def add_breaker_states(self, states: Callable[[], Mapping[str, str]]) -> None:
        """``aisle_external_search_breaker_open{tenant}``: 1 while a tenant's circuit breaker of the
        external search fallback is open, 0 when closed or half-open; ``states()`` (tenant -> ``closed``,
        ``open`` or ``half-open``, e.g. :meth:`aisle.search.external.registry.ExternalSearches.states`)
        is read at scrape time. Per worker process, like the breakers themselves."""
        self.add_gauge(
            "aisle_external_search_breaker_open",
            "1 while the tenant's external search circuit breaker is open (this worker), else 0.",
            lambda: {(tenant,): float(state == "open") for tenant, state in states().items()},
            labels=("tenant",),
        )

    def register(self, collector: Collector) -> None:
        """Add any prometheus-client Collector (its ``collect()`` runs at scrape time)."""
        self.collectors.append(collector)
        self.registry.register(collector)

    def exposition(self) -> bytes:
        """The text exposition of every series (summed over workers in multiprocess mode)."""
        if not self.multiprocess:
            return generate_latest(self.registry)
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        for collector in self.collectors:
            registry.register(collector)
        for attempt in range(SCRAPE_ATTEMPTS):
            try:
                return generate_latest(registry)
            except (struct.error, ValueError, OSError):  # a worker's metric file being created now
                if attempt == SCRAPE_ATTEMPTS - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")


class MetricsMiddleware:
    """Time every HTTP request and count it by method, route template and status (pure ASGI)."""

    def __init__(self, app: Any, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # what Starlette answers when the app raises before responding

        async def send_with_status(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            self.metrics.observe(scope, status, time.perf_counter() - start)


def count_tenant(operation: str) -> Any:
    """A route dependency: count the request in ``aisle_tenant_requests_total{operation, tenant}``.

    The tenant is the request's ``tenant`` query parameter or JSON body field (the body FastAPI has
    parsed already, so nothing is read twice); the middleware counts it when the response is done.
    """

    async def note_tenant(request: Request) -> None:
        tenants = await request_tenants(request, None)
        if tenants:
            request.scope[TENANT_KEY] = (operation, tenants[0])

    note_tenant.__name__ = f"count_tenant_{operation}"
    return Depends(note_tenant)


async def metrics_endpoint(request: Request) -> Response:
    """``GET /metrics``: the Prometheus text exposition (unauthenticated, like ``/health``)."""
    metrics: ServiceMetrics = request.app.state.metrics
    body = await run_in_threadpool(metrics.exposition)  # multiprocess mode reads one file per worker
    return Response(body, media_type=CONTENT_TYPE_LATEST)
