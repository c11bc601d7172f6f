"""The vector search service (port 8083): product embeddings per tenant, searched by text or vector.

Start with ``uvicorn --factory aisle.services.vectors.app:create_app`` (``aisle serve`` does). Tables are
built offline by ``aisle vectors build TENANT`` (and ``build-images``) and published to the bucket; this
service downloads the ones ``settings.data_dir`` lacks, opens them, and loads the text encoder, at
start-up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.search.filter_rows import FilterRows
from aisle.search.indexes import IndexRegistry
from aisle.services.common.app import service_app
from aisle.services.vectors import routes
from aisle.services.vectors.state import VectorState
from aisle.vectors.build import build_text_vectors
from aisle.vectors.catalog_follow import CatalogEmbedder
from aisle.vectors.neighbours import LocalNeighbours
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore
from aisle.vectors.text_encoder import EncoderUnavailable

log = logging.getLogger("aisle.vectors")


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the vector search service."""
    settings = settings or load_settings()
    blob = open_blob_store_from_settings(settings)
    tenants = Tenants(blob)
    indexes = IndexRegistry(tenants, settings.data_dir, check_every=settings.catalog_check_seconds)
    store = VectorStore.from_settings(settings, blob, serving_version=indexes.serving_version)
    search = VectorSearch(store)
    embedder = CatalogEmbedder(
        tenants,
        store,
        lambda texts: search.encoder.encode(texts),
        rebuild=lambda tenant: build_text_vectors(tenants, tenant, settings.data_dir, encoder=search.encoder),
    )
    state = VectorState(
        settings=settings,
        tenants=tenants,
        store=store,
        search=search,
        neighbours=LocalNeighbours(search, FilterRows(indexes.get)),
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Open every table built and load MiniLM, so the first request is fast: left to it, the encoder
        # made the first text query 475 ms (later ones 14 ms) and a photo table cost 0.13 s.
        text = False
        for tenant in tenants.names():
            for kind in ("text", "image"):
                if store.has(tenant, kind):
                    text = text or kind == "text"
                    log.info("%s vectors of %s loaded", kind, tenant)
        if text:
            try:
                state.search.encode("warm up")
            except EncoderUnavailable as exc:  # text queries will answer 503; vector queries still work
                log.warning("text encoder not loaded: %s", exc)
        # product writes' text vectors, in the background (aisle.vectors.catalog_follow)
        stop = threading.Event()
        follower = threading.Thread(
            target=embedder.run,
            args=(stop, settings.vectors_check_seconds),
            name="catalog-embedder",
            daemon=True,
        )
        follower.start()
        yield
        stop.set()
        follower.join(timeout=30)

    app = service_app(
        "vectors",
        title="Aisle vector search service",
        description="Index, delete and search product embeddings per tenant, by text (MiniLM) or by "
        "vector, with the search filters. Errors use one envelope: "
        '`{"error": {"code", "message", "details"}}`; a tenant without vectors answers 503 '
        "`vector_index_missing`, or `vectors_building` with a Retry-After while a background build of "
        "them runs (served within seconds of landing, no restart).",
        routers=[routes.router],
        lifespan=lifespan,
        settings=settings,
        tenants=tenants,
        bulk_paths=["/vectors"],
    )
    app.state.metrics.add_caches({"vector_tables": store.entry_count, "query_vectors": search.entry_count})
    app.state.vectors = state
    app.state.authorizer = Authorizer(settings, blob)
    return app
