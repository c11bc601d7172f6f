"""Opening a catalog version's index in a search process, with what the host lacks built first.

A version's index directory holds the tantivy index, the product rows and the serving tables
(:mod:`aisle.search.index.writer`, :mod:`~aisle.search.index.shared_rows`,
:mod:`~aisle.search.index.serving_tables`). Whichever process of the host first finds one missing
builds it from the catalog; the others map the files. With :class:`~aisle.search.build_child.
ChildBuilds` (the search service, ``AISLE_SEARCH_BUILDS=process``) that build runs in a child process,
so its temporaries (the catalog frame, the documents, polars' buffers: hundreds of megabytes at a
million products) never stay in a search worker's heap (issue 42); should the child fail, the process
builds what is still missing itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import polars as pl

from aisle.catalog.store import CatalogStore
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import AttributeConfiguration
from aisle.search.child_builds import ChildBuilds
from aisle.search.index.reader import TenantIndex, shared_tables, tables_ready
from aisle.search.index.writer import ensure_index, index_built, index_dir
from aisle.search.querylog import QueryLogStore
from aisle.search.spelling import SpellingCorrector, add_query_log

Progress = Callable[[str, int, int], None]
log = logging.getLogger("aisle.search")


def products_of(scope: BlobStore, version: str) -> Callable[[], pl.DataFrame]:
    """The products of catalog ``version``, read when called (only a build, or a live index once the
    log moves, needs them; nothing holds them before)."""
    return lambda: CatalogStore(scope).load(version).products


def prepare_index(
    tenants: Tenants,
    data_dir: Path,
    tenant: str,
    version: str,
    attributes: AttributeConfiguration,
    progress: Progress | None = None,
) -> Path:
    """Build whatever of ``version``'s index directory under ``attributes`` is missing (index, rows,
    serving tables), reading the catalog only then; returns the directory. Raises what the build
    raises (OSError, CatalogNotFound)."""
    scope = tenants.scope(tenant)
    path = index_dir(data_dir, tenant, version, attributes)
    if not index_built(path):
        ensure_index(CatalogStore(scope).load(version), attributes, path, progress=progress)
    if not tables_ready(path):
        shared_tables(path, products_of(scope, version), attributes)  # written; the caller opens
    return path


def open_version(
    tenants: Tenants,
    data_dir: Path,
    tenant: str,
    version: str,
    attributes: AttributeConfiguration,
    *,
    sequence: int = 0,
    builds: ChildBuilds | None = None,
    progress: Progress | None = None,
) -> tuple[TenantIndex, Path, Callable[[], pl.DataFrame]]:
    """``version``'s index opened at change-log ``sequence``, its speller weighted by the tenant's query
    log: (index, its directory, the version's products read when called). What the host lacks is built
    by ``builds`` first when given (a failure there is logged, and the build done here).

    Raises:
        CatalogNotFound, OSError: the version cannot be read or the index written.
    """
    scope = tenants.scope(tenant)
    path = index_dir(data_dir, tenant, version, attributes)
    if builds is not None and not (index_built(path) and tables_ready(path)):
        try:
            builds.index(tenant, version, attributes)
        except Exception as exc:  # the build below does it in this process
            log.warning("%s: index of %s not built in a child (%s): building it here", tenant, version, exc)
    prepare_index(tenants, data_dir, tenant, version, attributes, progress)
    products = products_of(scope, version)
    index = TenantIndex.open(tenant, path, version, products, attributes, sequence=sequence)
    queries = QueryLogStore(scope).load()
    if queries.height:
        index.speller = SpellingCorrector(add_query_log(index.speller.vocabulary, queries))
    return index, path, products
