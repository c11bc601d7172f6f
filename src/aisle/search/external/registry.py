"""Every tenant's guarded external search backend, opened on first use, reopened when its
``crs_config.json`` changes (the breaker, slots and cache start afresh with the new configuration)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from aisle.core.crs_config import CrsConfig
from aisle.search.external.guarded import BreakerStateHook, GuardedExternalSearch
from aisle.search.external.protocol import ExternalSearch
from aisle.search.external.resolver import open_external_search


class ExternalSearches:
    """Tenant -> :class:`GuardedExternalSearch`. Thread-safe.

    Args:
        on_breaker_state: called with (tenant, state) as breakers are made and change state (for a
            breaker-state gauge, e.g. ``aisle_external_search_breaker_state{tenant}``).
        opener: how a backend is opened from a configuration (default: the one resolver).
    """

    def __init__(
        self,
        *,
        on_breaker_state: BreakerStateHook | None = None,
        opener: Callable[[CrsConfig], ExternalSearch] = open_external_search,
    ) -> None:
        self.on_breaker_state = on_breaker_state
        self._open = opener
        self._by_tenant: dict[str, GuardedExternalSearch] = {}
        self._lock = threading.Lock()

    def get(self, tenant: str, crs: CrsConfig) -> GuardedExternalSearch:
        """The tenant's backend for this configuration.

        Raises:
            ExternalSearchNotConfigured (409): the configuration enables no backend.
            ExternalSearchAuthFailed (502): its secret reference cannot be read.
        """
        current = self._by_tenant.get(tenant)
        if current is not None and current.crs == crs:
            return current
        with self._lock:
            current = self._by_tenant.get(tenant)
            if current is not None and current.crs == crs:
                return current
            guarded = GuardedExternalSearch(
                tenant, crs, self._open(crs), on_breaker_state=self.on_breaker_state
            )
            self._by_tenant[tenant] = guarded
        if current is not None:
            current.close()  # calls in flight on it finish; new ones use the new backend
        return guarded

    def states(self) -> dict[str, str]:
        """Each opened tenant's breaker state (``closed``, ``open``, ``half-open``)."""
        return {tenant: g.breaker_state for tenant, g in list(self._by_tenant.items())}

    def close(self) -> None:
        with self._lock:
            opened, self._by_tenant = list(self._by_tenant.values()), {}
        for guarded in opened:
            guarded.close()
