"""A tenant's external search backend behind a circuit breaker, a concurrency bound and a short cache.

- Circuit breaker: pybreaker's state machine (https://github.com/danielfm/pybreaker; Nygard, "Release
  It!", ch. 5): ``fail_max`` consecutive failures open it, calls are refused for ``reset_timeout_s``,
  then one trial call half-opens it (success closes, failure reopens). pybreaker's ``call`` holds the
  breaker's lock while the wrapped function runs, which would serialise every external call of a tenant
  (pybreaker issue #55); so the backend is called outside the lock and only its outcome goes through
  ``breaker.call`` (instant), with a listener keeping the time the breaker opened. Errors that are not the
  service's failure (``counts_as_failure`` false: a rejected request, an unsupported operation) are
  excluded from the count.
- Concurrency: a ``threading.BoundedSemaphore`` of ``fallback.max_concurrency`` calls in flight; a call
  waits for a slot at most ``wait_s`` (the fallback stage waits not at all).
- Cache: ``cachetools.TTLCache`` of ``fallback.cache_size`` answers for ``fallback.cache_ttl_s`` seconds,
  keyed by the request (without its timeout); image searches are not cached.
- On an event loop (:meth:`GuardedExternalSearch.search_async`): the same cache, breaker and slots, the
  backend's ``search_async`` awaited (or, for a backend without one, its blocking ``search`` in a worker
  thread), so only a search that does call the service waits, and the loop serves others meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import pybreaker
from cachetools import TTLCache

from aisle.core.crs_config import CrsConfig
from aisle.search.external.errors import (
    ExternalSearchError,
    ExternalSearchTimeout,
    ExternalSearchUnavailable,
)
from aisle.search.external.protocol import (
    ExternalCompleteRequest,
    ExternalImageRequest,
    ExternalResult,
    ExternalSearch,
    ExternalSearchRequest,
    ExternalSuggestion,
)

log = logging.getLogger("aisle.search.external")

BreakerStateHook = Callable[[str, str], None]
"""Called with (tenant, state) when a tenant's breaker is created (``closed``) and on every change
(``closed``, ``open``, ``half-open``): where a breaker-state gauge plugs in."""

T = TypeVar("T")


class BreakerOpen(ExternalSearchUnavailable):
    """The tenant's circuit breaker is open: the service was not called."""

    reason = "breaker_open"


class Busy(ExternalSearchTimeout):
    """No free slot among the tenant's ``max_concurrency`` calls within the wait allowed."""

    reason = "busy"


class _BreakerWatch(pybreaker.CircuitBreakerListener):
    """Keeps when the breaker opened (pybreaker keeps it privately) and reports state changes."""

    def __init__(self, tenant: str, hook: BreakerStateHook | None) -> None:
        self.tenant = tenant
        self.hook = hook
        self.opened_at = 0.0

    def state_change(self, cb: pybreaker.CircuitBreaker, old_state: Any, new_state: Any) -> None:
        name = str(getattr(new_state, "name", new_state))
        if name == pybreaker.STATE_OPEN:
            self.opened_at = time.monotonic()
            log.warning("external search of tenant %s: circuit breaker open", self.tenant)
        if self.hook is not None:
            self.hook(self.tenant, name)


def _not_a_failure(exc: BaseException) -> bool:
    return isinstance(exc, ExternalSearchError) and not exc.counts_as_failure


class GuardedExternalSearch:
    """One tenant's :class:`ExternalSearch` with breaker, concurrency bound and cache (see the module).

    Every method raises only :class:`ExternalSearchError` subclasses: the backend's, :class:`BreakerOpen`
    (502 ``external_search_unavailable``) or :class:`Busy` (504 ``external_search_timeout``); an
    unexpected exception from a backend becomes ``ExternalSearchUnavailable`` (and is logged).
    """

    def __init__(
        self,
        tenant: str,
        crs: CrsConfig,
        backend: ExternalSearch,
        *,
        on_breaker_state: BreakerStateHook | None = None,
    ) -> None:
        self.tenant = tenant
        self.crs = crs
        self.backend = backend
        settings = crs.fallback
        self._watch = _BreakerWatch(tenant, on_breaker_state)
        self.breaker = pybreaker.CircuitBreaker(
            fail_max=settings.breaker.fail_max,
            reset_timeout=settings.breaker.reset_timeout_s,
            exclude=[_not_a_failure],
            listeners=[self._watch],
            name=f"external-search:{tenant}",
            throw_new_error_on_trip=False,
        )
        self._slots = threading.BoundedSemaphore(settings.max_concurrency)
        self._trial = threading.Lock()
        self._cache: TTLCache[tuple[Any, ...], Any] | None = (
            TTLCache(maxsize=settings.cache_size, ttl=settings.cache_ttl_s)
            if settings.cache_ttl_s > 0
            else None
        )
        self._cache_lock = threading.Lock()
        if on_breaker_state is not None:
            on_breaker_state(tenant, pybreaker.STATE_CLOSED)

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def breaker_state(self) -> str:
        """``closed``, ``open`` or ``half-open``."""
        return str(self.breaker.current_state)

    # -- the protocol, guarded ------------------------------------------------------------------

    def search(
        self, request: ExternalSearchRequest, *, wait_s: float | None = None
    ) -> tuple[ExternalResult, bool]:
        """The backend's answer and whether it came from the cache. ``wait_s``: how long to wait for a
        free slot (default: the request's whole ``timeout_s``, the wait taken from it)."""
        return self._cached(request.cache_key(), lambda r: self.backend.search(r), request, wait_s)

    async def search_async(self, request: ExternalSearchRequest) -> tuple[ExternalResult, bool]:
        """:meth:`search` for a caller on an event loop, never waiting for a slot (``wait_s`` 0): the
        cached answer at once, else the backend's ``search_async`` awaited (a backend without one: its
        ``search`` in a worker thread), through the same breaker, slots and cache.

        Raises: as :meth:`search` (:class:`BreakerOpen`, :class:`Busy`, the backend's errors).
        """
        key = request.cache_key()
        hit = self._cache_get(key)
        if hit is not None:
            return hit, True
        trial = self._admit()
        try:
            if not self._slots.acquire(blocking=False):
                raise Busy(f"external search of tenant {self.tenant}: all slots busy")
            try:
                native = getattr(self.backend, "search_async", None)
                try:
                    if native is not None:
                        value = await native(request)
                    else:
                        value = await asyncio.to_thread(self.backend.search, request)
                except Exception as exc:
                    return self._settle(None, self._failure(exc)), False
                result: ExternalResult = self._settle(value, None)
            finally:
                self._slots.release()
        finally:
            if trial:
                self._trial.release()
        self._cache_put(key, result)
        return result, False

    def complete(
        self, request: ExternalCompleteRequest, *, wait_s: float | None = None
    ) -> list[ExternalSuggestion]:
        key = ("complete", request.prefix, request.size, request.visitor_id)
        return self._cached(key, lambda r: self.backend.complete(r), request, wait_s)[0]

    def search_image(self, request: ExternalImageRequest, *, wait_s: float | None = None) -> ExternalResult:
        return self._guarded(lambda r: self.backend.search_image(r), request, wait_s)

    def close(self) -> None:
        self.backend.close()

    # -- machinery ------------------------------------------------------------------------------

    def _cached(
        self, key: tuple[Any, ...], call: Callable[[Any], T], request: Any, wait_s: float | None
    ) -> tuple[T, bool]:
        hit = self._cache_get(key)
        if hit is not None:
            return hit, True
        value = self._guarded(call, request, wait_s)
        self._cache_put(key, value)
        return value, False

    def _cache_get(self, key: tuple[Any, ...]) -> Any:
        if self._cache is None:
            return None
        with self._cache_lock:
            return self._cache.get(key)

    def _cache_put(self, key: tuple[Any, ...], value: Any) -> None:
        if self._cache is not None:
            with self._cache_lock:
                self._cache[key] = value

    def _guarded(self, call: Callable[[Any], T], request: Any, wait_s: float | None) -> T:
        trial = self._admit()
        try:
            started = time.perf_counter()
            wait = request.timeout_s if wait_s is None else min(wait_s, request.timeout_s)
            acquired = self._slots.acquire(timeout=wait) if wait > 0 else self._slots.acquire(blocking=False)
            if not acquired:
                raise Busy(f"external search of tenant {self.tenant}: all slots busy")
            try:
                left = request.timeout_s - (time.perf_counter() - started)
                if left <= 0:
                    raise Busy(f"external search of tenant {self.tenant}: no time left after waiting")
                return self._record(call, replace(request, timeout_s=left))
            finally:
                self._slots.release()
        finally:
            if trial:
                self._trial.release()

    def _admit(self) -> bool:
        """Refuse while the breaker is open; once its pause is over let one trial call through.
        Returns whether this call is the trial (it then holds ``_trial``)."""
        state = self.breaker.current_state
        if state == pybreaker.STATE_CLOSED:
            return False
        paused = time.monotonic() - self._watch.opened_at < self.breaker.reset_timeout
        if state == pybreaker.STATE_OPEN and paused:
            raise BreakerOpen(f"external search of tenant {self.tenant}: circuit breaker open")
        if not self._trial.acquire(blocking=False):
            raise BreakerOpen(
                f"external search of tenant {self.tenant}: circuit breaker half-open, trial running"
            )
        return True

    def _record(self, call: Callable[[Any], T], request: Any) -> T:
        """Run ``call`` outside the breaker's lock, then feed its outcome to the breaker."""
        try:
            value = call(request)
        except Exception as exc:
            return self._settle(None, self._failure(exc))  # type: ignore[no-any-return]
        return self._settle(value, None)  # type: ignore[no-any-return]

    def _failure(self, exc: Exception) -> ExternalSearchError:
        """The error a backend's exception counts as: its own, or (a backend bug must not fail a
        search) the service failing."""
        if isinstance(exc, ExternalSearchError):
            return exc
        log.exception("external search backend %s of tenant %s failed", self.backend.name, self.tenant)
        return ExternalSearchUnavailable(f"external search backend failed: {exc.__class__.__name__}")

    def _settle(self, value: Any, error: ExternalSearchError | None) -> Any:
        """Feed a call's outcome to the breaker: ``value`` returned, or ``error`` raised."""

        def outcome() -> Any:
            if error is not None:
                raise error
            return value

        try:
            return self.breaker.call(outcome)
        except pybreaker.CircuitBreakerError:
            # another call opened the breaker meanwhile: this call's own outcome still stands
            if error is not None:
                raise error from None
            return value
