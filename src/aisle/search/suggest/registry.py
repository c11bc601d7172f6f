"""The suggestion indexes one process serves: built on first use, rebuilt when their inputs change.

A tenant's inputs (catalog version, query-log version, autocomplete and global configuration) are
checked at most every ``check_every`` seconds. While a tenant's new suggestion index is being built,
other requests for it keep getting the previous one, so a rebuild never stalls traffic.

The checked catalog candidates (brands, categories, product names: the slow part, seconds on 50,000
products) are cached on local disk under ``<data_dir>/suggest/<tenant>/<digest>.parquet``, keyed by
catalog version, attribute configuration, enabled types, stop words and the output of ``normalize``: a
restart, a new query log or a new boost reuses them. The suggester itself (texts, scores and prefix
index) is written once per host as mapped tables, ``<data_dir>/suggest/<tenant>/<digest>.tables``
(:mod:`aisle.core.mapped`), keyed by everything it is built from: one process builds it under a file
lock while the host's others wait, and all of them map the same files (issue 42).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from aisle.catalog.store import CatalogNotFound, CatalogStore
from aisle.core.errors import AisleError
from aisle.core.mapped import host_lock
from aisle.core.memory import release_freed_memory
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.core.tenant_config import AutocompleteConfiguration, TypoConfig
from aisle.search.child_builds import ChildBuilds
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry
from aisle.search.normalize import normalize
from aisle.search.opening import open_version
from aisle.search.querylog import QueryLogStore
from aisle.search.suggest.candidates import (
    Candidate,
    catalog_candidates,
    checked,
    deduplicate,
    query_candidates,
)
from aisle.search.suggest.suggester import Suggester, enabled_types

CACHE_FORMAT = 1
# Cached keys are only valid for the normalisation that made them: its output on this text is part of
# the cache key, so a change to ``normalize`` rebuilds the cache.
NORMALIZE_PROBE = '1/2" PVC 8 ft. 2x4 Café 60W 3 gal. 100 Sq. Ft. Drill/Driver 12-Volt Q&Q T-shirt'

log = logging.getLogger("aisle.suggest")


@dataclass(frozen=True)
class _Entry:
    checked: float
    key: tuple[object, ...]
    config: object
    suggester: Suggester


class SuggesterRegistry:
    """Per-tenant :class:`Suggester` cache over the search indexes of ``indexes``."""

    def __init__(
        self,
        tenants: Tenants,
        indexes: IndexRegistry,
        check_every: float = 1.0,
        *,
        builds: ChildBuilds | None = None,
    ) -> None:
        self.tenants = tenants
        self.builds = builds
        """Where a missing suggester is built (None: here; see :meth:`_shared`)."""
        self.indexes = indexes
        self.check_every = check_every
        self._entries: dict[str, _Entry] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._refreshing: set[str] = set()

    def entry_count(self) -> int:
        """Suggesters held (one per tenant)."""
        return len(self._entries)

    def _lock(self, tenant: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(tenant, threading.Lock())

    def ready(self, tenant: str) -> Suggester | None:
        """The tenant's suggester if one is loaded, else None (then call :meth:`get`). No I/O.

        For answering on the event loop: when the suggester was checked more than ``check_every``
        seconds ago, a background thread checks it (and rebuilds it when its inputs changed) while
        this one keeps serving, so no request waits for storage reads.
        """
        entry = self._entries.get(tenant)
        if entry is None:
            return None
        if time.monotonic() - entry.checked >= self.check_every:
            self._refresh_soon(tenant)
        return entry.suggester

    def _refresh_soon(self, tenant: str) -> None:
        with self._guard:
            if tenant in self._refreshing:
                return
            self._refreshing.add(tenant)

        def refresh() -> None:
            try:
                self.get(tenant)
            except AisleError as exc:  # tenant deleted or misconfigured: the next request reports it
                log.warning("suggestions for %s dropped: %s", tenant, exc.message)
                self._entries.pop(tenant, None)
            except Exception:  # pragma: no cover - keep serving the previous suggester
                log.exception("suggestions for %s: refresh failed", tenant)
            finally:
                with self._guard:
                    self._refreshing.discard(tenant)

        threading.Thread(target=refresh, name=f"suggest-refresh-{tenant}", daemon=True).start()

    def get(self, tenant: str) -> Suggester:
        """The tenant's suggester for its current catalog, log and configuration.

        Raises:
            TenantNotFound, ConfigInvalid: from the tenant's configuration.
            CatalogNotFound: the tenant has no catalog yet.
        """
        config = self.tenants.config(tenant)
        entry = self._entries.get(tenant)
        now = time.monotonic()
        if entry is not None and now - entry.checked < self.check_every and entry.config is config:
            return entry.suggester
        index = self.indexes.get(tenant)
        logs = QueryLogStore(self.tenants.scope(tenant))
        key = _key(index, config, logs)
        if entry is not None and entry.key == key:
            self._entries[tenant] = _Entry(now, key, config, entry.suggester)
            return entry.suggester
        lock = self._lock(tenant)
        if not lock.acquire(blocking=entry is None):
            return entry.suggester  # type: ignore[union-attr]  # being rebuilt: serve the previous one
        try:
            current = self._entries.get(tenant)
            if current is not None and current.key == key:
                return current.suggester
            suggester = self._shared(tenant, index, config, logs, key)
            self._entries[tenant] = _Entry(time.monotonic(), key, config, suggester)
            release_freed_memory()  # the build's temporary lists and frames, back to the system
            return suggester
        finally:
            lock.release()

    def _shared(
        self,
        tenant: str,
        index: TenantIndex,
        config: TenantConfig,
        logs: QueryLogStore,
        key: tuple[object, ...],
    ) -> Suggester:
        """The suggester of ``key``, mapped from its tables under ``<data dir>/suggest/<tenant>/``: built
        and written first by the one process of the host that takes the folder's lock (or by a child
        process it starts: :attr:`builds`), while the others wait and then map what it wrote, so a host
        holds one copy (issue 42: at 300,000 products a suggester held 296 MiB in each worker). Kept in
        memory when the tables cannot be written."""
        folder = Path(self.indexes.data_dir) / "suggest" / tenant
        digest = hashlib.sha1(repr((self._catalog_ident(index, config), key)).encode()).hexdigest()[:20]
        dest = folder / f"{digest}.tables"
        ac, typo = config.autocomplete, config.global_.stages.typo
        found = _mapped(dest, ac, typo)
        if found is None and self.builds is not None:
            try:
                self.builds.suggestions(tenant)
            except Exception as exc:  # built here below
                log.warning("suggestions of %s not built in a child (%s): building them here", tenant, exc)
            found = _mapped(dest, ac, typo)  # None: the child saw newer inputs, or failed
        if found is not None:
            return found
        folder.mkdir(parents=True, exist_ok=True)
        with host_lock(folder / ".build.lock"):
            found = _mapped(dest, ac, typo)  # another process built it while this one waited
            if found is not None:
                return found
            start = time.perf_counter()
            candidates = self._catalog_candidates(tenant, index, config)
            if "query" in enabled_types(ac):
                candidates += checked(index, query_candidates(logs.load()), config.global_.stop_words)
            built = Suggester(deduplicate(candidates), ac, typo, time.perf_counter() - start)
            del candidates
            log.info("suggestions for %s: %d candidates in %.2f s", tenant, len(built), built.build_seconds)
            try:
                built.save(dest)
            except OSError as exc:
                log.warning("suggestions of %s kept in memory, not shared (%s)", tenant, exc)
                return built
            for old in folder.glob("*.tables"):
                if old != dest:
                    shutil.rmtree(old, ignore_errors=True)  # a process mapping them keeps its pages
        return _mapped(dest, ac, typo) or built

    def _catalog_ident(self, index: TenantIndex, config: TenantConfig) -> str:
        """What the catalog candidates depend on, as a string (their cache key)."""
        return repr(
            (
                CACHE_FORMAT,
                normalize(NORMALIZE_PROBE),
                index.version,
                index.config.model_dump_json(),
                sorted(enabled_types(config.autocomplete) - {"query"}),
                list(config.global_.stop_words),
            )
        )

    def _catalog_candidates(self, tenant: str, index: TenantIndex, config: TenantConfig) -> list[Candidate]:
        """Checked brand, category and product candidates, from the disk cache when present."""
        enabled = enabled_types(config.autocomplete) - {"query"}
        stop = config.global_.stop_words
        ident = self._catalog_ident(index, config)
        folder = Path(self.indexes.data_dir) / "suggest" / tenant
        path = folder / (hashlib.sha1(ident.encode()).hexdigest()[:20] + ".parquet")
        if path.exists():
            try:
                frame = pl.read_parquet(path)
                return [Candidate(*row) for row in frame.iter_rows()]
            except (OSError, pl.exceptions.PolarsError) as exc:
                log.warning("suggestion cache %s unreadable (%s): rebuilding", path, exc)
        products = CatalogStore(self.tenants.scope(tenant)).load(index.version).products
        found = catalog_candidates(index, products, enabled, stop)
        folder.mkdir(parents=True, exist_ok=True)
        frame = pl.DataFrame(
            [(c.text, c.key, c.type, c.popularity, c.hits) for c in found],
            schema={
                "text": pl.Utf8,
                "key": pl.Utf8,
                "type": pl.Utf8,
                "popularity": pl.Float64,
                "hits": pl.Int64,
            },
            orient="row",
        )
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        frame.write_parquet(tmp)
        os.replace(tmp, path)  # atomic: a concurrent reader sees no file or the whole file
        for old in folder.glob("*.parquet"):
            if old != path:
                old.unlink(missing_ok=True)
        return found

    def loaded(self) -> list[str]:
        return sorted(self._entries)


def _key(index: TenantIndex, config: TenantConfig, logs: QueryLogStore) -> tuple[object, ...]:
    """What a tenant's suggester is built from, but the catalog candidates' own key: the version (not the
    snapshot: catalog candidates come from the version's products), the query log's version, and the
    autocomplete, typo and stop-word settings."""
    return (
        index.version,
        logs.current_version(),
        config.autocomplete.model_dump_json(),
        config.global_.stages.typo.model_dump_json(),
        tuple(config.global_.stop_words),
    )


def build_suggestion_tables(tenants: Tenants, data_dir: Path, tenant: str) -> None:
    """Write ``tenant``'s suggestion tables for its current catalog version, query log and configuration
    (:mod:`aisle.search.build_child`), the version's index built first if the host lacks it; nothing
    when they are written already.

    Raises:
        TenantNotFound, ConfigInvalid: from the tenant's configuration.
        CatalogNotFound: the tenant has no catalog yet.
    """
    config = tenants.config(tenant)
    pointer = CatalogStore(tenants.scope(tenant)).pointer()
    if pointer is None:
        raise CatalogNotFound("the tenant has no catalog yet: run `aisle catalog import`")
    index, _, _ = open_version(tenants, data_dir, tenant, pointer.version, config.attributes)
    registry = SuggesterRegistry(tenants, IndexRegistry(tenants, data_dir))
    logs = QueryLogStore(tenants.scope(tenant))
    registry._shared(tenant, index, config, logs, _key(index, config, logs))


def _mapped(dest: Path, autocomplete: AutocompleteConfiguration, typo: TypoConfig) -> Suggester | None:
    """:meth:`Suggester.mapped`, None also when the files went meanwhile (a newer build removed them)."""
    try:
        return Suggester.mapped(dest, autocomplete, typo)
    except (OSError, KeyError, ValueError) as exc:
        log.warning("suggestion tables %s unreadable (%s): rebuilding", dest, exc)
        return None
