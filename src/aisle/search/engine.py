"""The search engine's front door: built once from the settings, called by the search service.

:class:`SearchEngine` holds everything one search process needs (spec "Search service"): the tenants'
full-text indexes, the pipeline with its merchandising rules, hybrid retrieval and learned rankers, the
neighbour source for semantic and image search (this process's tables, or the vector search service
when ``AISLE_VECTOR_URL`` is set; see :mod:`aisle.vectors.neighbours`), the photo model, and the
autocomplete indexes. The service only parses requests, calls one method here and renders the result.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import tantivy

from aisle.core.config import Settings
from aisle.core.errors import AisleError, BadRequest, ErrorCode
from aisle.core.readiness import Readiness
from aisle.core.storage import BlobStore
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.experiments.store import LiveExperiments
from aisle.search import browse
from aisle.search.experiments import SearchArms
from aisle.search.external.registry import ExternalSearches
from aisle.search.filter_rows import FilterRows
from aisle.search.indexes import IndexRegistry, TenantIndex
from aisle.search.model import FilterSpec, SearchResult
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.ranking.doc_terms import DocTerms
from aisle.search.ranking.store import RankerStore
from aisle.search.rules.book import RuleBook, RuleBooks, RuleDraft
from aisle.search.rules.model import Rule
from aisle.search.rules.preview import Preview, preview_rule
from aisle.search.semantic import pool_size, vector_search_result
from aisle.search.stages.fallback import Steps, awaited, blocking
from aisle.search.suggest.registry import SuggesterRegistry
from aisle.vectors.image_encoder import ImageEncoder, ImageEncoderUnavailable
from aisle.vectors.image_input import decode_image
from aisle.vectors.neighbours import (
    LocalNeighbours,
    NeighbourQuery,
    NeighbourSource,
    RemoteNeighbours,
    open_neighbour_source,
)
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore

log = logging.getLogger("aisle.search")

#: autocomplete's input checks (configuration, catalog, log pointers), seconds apart: ~1 ms of GIL each
SUGGEST_CHECK_EVERY_S = 5.0


@dataclass(frozen=True)
class CategoryChildren:
    """``POST /categories``: the category attribute used and its children, ``(name, path, count)``."""

    field: str
    children: list[tuple[str, str, int]]


class SearchEngine:
    """Search, browse, semantic and image search and autocomplete over every tenant of one store.

    Args:
        tenants: the tenants' configuration in object storage.
        indexes: their full-text indexes (built under ``data_dir`` on first use).
        vectors: this process's vector tables and text encoder (the hybrid stage reads them).
        vector_url: where ``vector_search``/``image_search`` get neighbours (``AISLE_VECTOR_URL``: empty
            for ``vectors``, or the vector search service's http(s) URL).
        rules, rankers, external: merchandising rules, learned rankers and each tenant's external
            retail search service for the fallback (None: stages that do nothing).
        arms: the running A/B experiments and what their variants change (None: no experiments).
        budget_s: seconds after which optional stages are skipped (``AISLE_SEARCH_BUDGET_MS`` / 1000).
    """

    def __init__(
        self,
        tenants: Tenants,
        indexes: IndexRegistry,
        vectors: VectorSearch,
        *,
        vector_url: str | None = None,
        rules: RuleBooks | None = None,
        rankers: RankerStore | None = None,
        external: ExternalSearches | None = None,
        arms: SearchArms | None = None,
        budget_s: float = 0.25,
    ) -> None:
        self.tenants = tenants
        self.indexes = indexes
        self.vectors = vectors
        self.rankers = rankers
        self.external = external
        self.filter_rows = FilterRows(indexes.get)
        self.neighbours: NeighbourSource = open_neighbour_source(
            vector_url, lambda: LocalNeighbours(vectors, self.filter_rows)
        )
        stages = default_stages(
            rules=rules, vectors=vectors, filter_rows=self.filter_rows, rankers=rankers, external=external
        )
        self.pipeline = SearchPipeline(stages, budget_s=budget_s)
        self.suggesters = SuggesterRegistry(tenants, indexes, SUGGEST_CHECK_EVERY_S, builds=indexes.builds)
        self.rules = rules
        self.arms = arms
        self._image_encoder: ImageEncoder | None = None
        self._image_lock = threading.Lock()
        indexes.warm = self._warm_index  # a new catalog version's, before it is served

    def cache_sizes(self) -> dict[str, Callable[[], int]]:
        """Each in-process cache's name and a function counting its entries (for the metrics)."""
        sizes = {
            "tenant_configs": self.tenants.entry_count,
            "indexes": self.indexes.entry_count,
            "vector_tables": self.vectors.store.entry_count,
            "query_vectors": self.vectors.entry_count,
            "filter_rows": self.filter_rows.entry_count,
            "suggesters": self.suggesters.entry_count,
        }
        if self.rules is not None:
            sizes["rule_books"] = self.rules.entry_count
        if self.rankers is not None:
            sizes["rankers"] = self.rankers.entry_count
        if self.arms is not None:
            sizes["experiment_arms"] = self.arms.entry_count
        return sizes

    @classmethod
    def from_settings(
        cls, settings: Settings, store: BlobStore, *, tenants: Tenants | None = None
    ) -> SearchEngine:
        """The engine of a search process: ``store`` for tenants, rules, rankers and published vector
        tables, ``settings.data_dir`` for indexes and the local copies of the tables,
        ``settings.vector_url`` for the neighbour source. ``tenants``: the process's configuration
        cache over ``store`` when it already has one (default: a new one).

        Raises:
            ValueError: ``AISLE_VECTOR_URL`` is neither empty, ``local:`` nor an http(s) URL.
        """
        tenants = tenants if tenants is not None else Tenants(store)
        indexes = IndexRegistry.serving(tenants, settings)
        rules = RuleBooks(store)
        return cls(
            tenants,
            indexes,
            VectorSearch(VectorStore.from_settings(settings, store, serving_version=indexes.serving_version)),
            vector_url=settings.vector_url,
            rules=rules,
            rankers=RankerStore(store, compiled_dir=settings.data_dir / "rankers"),
            external=ExternalSearches(),
            arms=SearchArms(LiveExperiments(store), rules),
            budget_s=settings.search_budget_ms / 1000,
        )

    # -- lexical search and browsing ------------------------------------------------------------

    def readiness(self, tenant: str) -> Readiness[TenantConfig]:
        """Whether a search of ``tenant`` now is CPU work only, with nothing to wait for, and the
        tenant's configuration (``found``) when it was looked up on the way (see :mod:`aisle.core.readiness`).

        A search waits for nothing when the tenants' store is local (refreshing a cached configuration,
        rule book or catalog version is a file read, not a network call) and the tenant's index is open
        and current (no build; a catalog check falling due is one pointer read here: only a new version
        waits). The search service runs such a search on its event loop with :meth:`search_async`, not
        the thread pool (the hop costs a sixth of a search's CPU, issue 18), fallback call awaited.
        Either way ``config`` goes on to the search, looked up once. Any doubt (an unknown tenant, a bad
        configuration) answers "waits": the search runs on the thread pool and raises there.
        """
        if self.tenants.store.local_path("") is None:
            return Readiness(waits=True)  # a remote store: looked up in the thread pool
        try:
            config = self.tenants.config(tenant)
        except Exception:  # the thread-pool path raises it, with its status
            return Readiness(waits=True)
        return Readiness(
            waits=not self.indexes.is_current(tenant, config.attributes, look=True), found=config
        )

    def search(self, tenant: str, query: SearchQuery, *, config: TenantConfig | None = None) -> SearchResult:
        """The full pipeline for one tenant. ``config``: the tenant's configuration when the caller
        holds it (from :meth:`readiness`), else looked up here, once.

        A search naming a visitor while the tenant runs A/B experiments gets the visitor's variants
        (:mod:`aisle.search.experiments`): their settings, rules and ranker, and
        ``queryGraph.experiments`` naming them, so the logged answer and the events after it join to them.

        Raises:
            TenantNotFound (404), CatalogNotFound (404): no such tenant or no catalog yet.
            BadRequest: unknown or disallowed filter/facet fields, bad filter values, unavailable sort.
        """
        config = config if config is not None else self.tenants.config(tenant)
        return blocking(self._search_steps(tenant, query, config))

    async def search_async(self, tenant: str, query: SearchQuery, *, config: TenantConfig) -> SearchResult:
        """:meth:`search` on an event loop, for a tenant :meth:`readiness` found ready (``config`` its
        configuration from there): the same steps, the stages inline, the external fallback's call, when
        this search makes one, awaited (same deadline, breaker, slots and cache as :meth:`search`).

        Raises: as :meth:`search`.
        """
        return await awaited(self._search_steps(tenant, query, config))

    def _search_steps(self, tenant: str, query: SearchQuery, config: TenantConfig) -> Steps[SearchResult]:
        index = self.indexes.get(tenant, config=config)
        arm = self.arms.arm(tenant, config, query.visitor_id) if self.arms is not None else None
        if arm is None:
            result = yield from self.pipeline.search_steps(index, config, query)
        else:
            steps = self.pipeline.search_steps(
                index, arm.config, query, draft=arm.rules, ranker_version=arm.ranker
            )
            result = arm.tagged((yield from steps))
        result.catalog_sequence = index.sequence  # the change-log entry the answer reflects
        return result

    def preview(
        self,
        tenant: str,
        query: SearchQuery,
        rule: Rule,
        *,
        replaces: str | None = None,
        at: datetime | None = None,
    ) -> Preview:
        """The live search without and with ``rule`` (see :func:`~aisle.search.rules.preview.preview_rule`).

        Both runs go through this engine's own pipeline (stages, hybrid retrieval, learned ranker,
        fallback, deadline), with only the tenant's rule set swapped for that call: the live rules
        minus ``replaces`` and ``rule.id``, then with ``rule`` added, matched at ``at`` (default: now).

        Raises: what :meth:`search` raises.
        """
        config = self.tenants.config(tenant)
        index = self.indexes.get(tenant, config=config)
        live = self.rules.book(tenant) if self.rules is not None else RuleBook([])

        def search(draft: RuleDraft) -> SearchResult:
            result = self.pipeline.search(index, config, query, draft=draft)
            result.catalog_sequence = index.sequence  # as the live answer names it
            return result

        return preview_rule(live, rule, search, offset=query.offset, replaces=replaces, at=at)

    def items(
        self, tenant: str, filters: list[FilterSpec], offset: int, size: int
    ) -> tuple[list[dict[str, Any]], int]:
        """Catalog products in catalog order: ``size`` from ``offset``, and the total passing ``filters``."""
        return browse.list_items(self.indexes.get(tenant), filters, offset, size)

    def item(self, tenant: str, product_id: str) -> dict[str, Any]:
        """One product by id. Raises NotFound (``product_not_found``)."""
        return browse.get_item(self.indexes.get(tenant), product_id)

    def categories(
        self, tenant: str, field: str | None, parent: str | None, query: SearchQuery
    ) -> CategoryChildren:
        """Children of ``parent`` (top level without one) with counts of the products ``query`` (its
        text and filters) matches: rules and query understanding apply as in a search, no page is made."""
        config = self.tenants.config(tenant)
        index = self.indexes.get(tenant, config=config)
        attr = browse.category_attribute(index, field)
        counting = replace(query, size=0, offset=0, facets=())
        match = self.pipeline.run(index, config, counting).retrieval.match_query
        match = match if match is not None else tantivy.Query.all_query()
        return CategoryChildren(attr.name, browse.category_children(index, attr, parent, match))

    def category_levels(
        self, tenant: str, field: str | None, depth: int
    ) -> tuple[str, list[list[tuple[str, int]]], list[browse.Node]]:
        """The category tree: attribute name, value counts per level, and the nested roots."""
        index = self.indexes.get(tenant)
        attr = browse.category_attribute(index, field)
        levels, roots = browse.category_levels(index, attr, depth)
        return attr.name, levels, roots

    # -- semantic and image search --------------------------------------------------------------

    def vector_search(
        self, tenant: str, query: SearchQuery, *, authorization: str | None = None
    ) -> SearchResult:
        """``query`` embedded with MiniLM, its nearest products within the filters, shaped as a search
        response (see :mod:`aisle.search.semantic`; ``user_group`` plays no part). ``authorization``
        goes to a remote vector service.

        Raises:
            BadRequest: ``query_required`` for a blank query; bad filters or facets.
            Unavailable (503): ``vector_index_missing``, ``vector_service_unavailable``.
        """
        if not query.text.strip():
            raise BadRequest("vector search needs a non-empty query", code=ErrorCode.QUERY_REQUIRED)
        config = self.tenants.config(tenant)
        index = self.indexes.get(tenant, config=config)
        wanted = NeighbourQuery(
            k=pool_size(query.size, query.offset),
            text=query.text,
            filters=[f.model_dump() for f in query.filters],
        )
        found = self.neighbours.neighbours(tenant, wanted, authorization=authorization)
        return vector_search_result(index, config, query, found)

    def image_search(
        self,
        tenant: str,
        data: bytes,
        *,
        size: int = 20,
        exclude: Sequence[str] = (),
        authorization: str | None = None,
    ) -> SearchResult:
        """Products whose photos look most like the JPEG or PNG ``data`` (EfficientNet-Lite0 features
        with the tenant's label probe), nearest first.

        Raises:
            ImageRejected (4xx): not an image, too many pixels (see :mod:`aisle.vectors.image_input`).
            Unavailable (503): ``vector_index_missing``, ``image_search_unavailable`` (no photo model).
        """
        config = self.tenants.config(tenant)
        index = self.indexes.get(tenant, config=config)
        image = decode_image(data)  # bad input is the caller's 4xx whatever the server's state
        self.neighbours.check(tenant, "image")  # 503 vector_index_missing before embedding
        features = self.image_encoder().encode([image])[0]
        wanted = NeighbourQuery(k=pool_size(size, 0), vector=features, kind="image", exclude=exclude)
        found = self.neighbours.neighbours(tenant, wanted, authorization=authorization)
        return vector_search_result(index, config, SearchQuery(size=size), found)

    def image_encoder(self, *, export: bool = True) -> ImageEncoder:
        """The photo model, loaded on first use (exported to ONNX once when ``export``; tens of seconds).

        Raises:
            ImageEncoderUnavailable (503): no exported model and no ``image`` extra to export it.
        """
        if self._image_encoder is None:
            with self._image_lock:
                if self._image_encoder is None:
                    data_dir = self.indexes.data_dir
                    self._image_encoder = ImageEncoder.load(
                        data_dir, threads=1, export=export, bucket=self.tenants.store
                    )
        return self._image_encoder

    # -- process life ---------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Open every tenant's index, ranker token table, text and photo vectors, run the photo model and
        MiniLM (only when a tenant's searches embed with it: 140 MB a worker, issue 32) once, and build the
        suggestion indexes in a background thread, so no search pays for them (each seconds, past the
        250 ms deadline). A tenant that fails to load is logged and skipped."""
        names = self.tenants.names()
        for tenant in names:
            try:
                self._warm_index(self.indexes.get(tenant))
            except AisleError as exc:
                log.warning("tenant %s not loaded: %s", tenant, exc.message)
        # autocomplete indexes (a second or more each) in the background: search answers meanwhile,
        # and a tenant's first GET /suggestions waits for its build at most, never starts one
        threading.Thread(
            target=self._warm_suggesters, args=(names,), name="suggest-warm", daemon=True
        ).start()
        try:
            # every tenant's table is opened (a list, not any()); MiniLM only where searches embed with it
            if [t for t in names if self.vectors.embeds_with_model(t, self.tenants.query_encoder)]:
                self.vectors.encode("warm up")
            if not isinstance(self.neighbours, RemoteNeighbours) and [
                t for t in names if self.vectors.store.has(t, "image")
            ]:
                from PIL import Image

                try:  # never exports here (tens of seconds): a photo table implies the model exists
                    self.image_encoder(export=False).encode([Image.new("RGB", (224, 224))])
                except ImageEncoderUnavailable as exc:
                    log.warning("image search not warmed up: %s", exc.message)
        except Exception:  # a failed warm-up only makes the first request slower
            log.exception("start-up warm-up of the vectors failed")

    def _warm_index(self, index: TenantIndex) -> None:
        if self.rankers is not None and self.rankers.current(index.tenant) is not None:
            DocTerms.of(index)  # the ranker's token table (seconds), not on a first query

    def _warm_suggesters(self, names: list[str]) -> None:
        for tenant in names:
            try:
                self.suggesters.get(tenant)
            except AisleError as exc:
                log.warning("suggestions of tenant %s not built at start-up: %s", tenant, exc.message)
            except Exception:  # only the first request pays for it then
                log.exception("suggestions of tenant %s not built at start-up", tenant)

    def close(self) -> None:
        self.indexes.close()
        if self.external is not None:
            self.external.close()
        if isinstance(self.neighbours, RemoteNeighbours):
            self.neighbours.close()
