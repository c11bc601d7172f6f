"""Process settings, read from the environment with the ``AISLE_`` prefix.

Per-tenant configuration (the five JSON files) lives in :mod:`aisle.core.tenant_config`;
this module holds only what one process needs to start: where storage is, ports, switches.

Values that follow from others are derived here, once: a service URL left unset is
``http://<host>:<that service's port>`` (:data:`DERIVED_URLS`), so moving a service with its port alone
(``AISLE_AUTH_PORT=18086``) moves every process's view of it too: the token service issues tokens as
``http://127.0.0.1:18086`` and every service expects that issuer. An explicit URL (a load balancer, a
public name) always wins.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DERIVED_URLS: tuple[tuple[str, str], ...] = (
    ("auth_url", "auth_port"),
    ("predict_url", "predict_port"),
    ("edit_url", "edit_port"),
    ("analytics_url", "analytics_port"),
)
"""(URL field, port field): the URL, when unset or empty, is ``http://<host>:<port>``. ``vector_url`` is
not among them: unset, it means the search service finds neighbours in-process."""

WILDCARD_HOSTS = ("0.0.0.0", "::", "")
"""Bind addresses that name no host to connect to: derived URLs use the loopback instead."""


def client_host(host: str) -> str:
    """The host part of a URL reaching a service bound on ``host`` from this machine: the loopback for a
    wildcard address, an IPv6 address in brackets (RFC 3986 section 3.2.2)."""
    if host in WILDCARD_HOSTS:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


class Settings(BaseSettings):
    """Settings shared by every Aisle service and the CLI.

    Every field can be set as ``AISLE_<FIELD>`` (for example ``AISLE_STORAGE_URL``).
    """

    model_config = SettingsConfigDict(env_prefix="AISLE_", extra="ignore")

    storage_url: str = Field(
        default="file://./var/bucket",
        description="Object storage holding tenant configuration, catalogs, rules and model artifacts: "
        "file://DIR or s3://BUCKET (S3 options from AISLE_S3_* / AWS_* variables).",
    )
    data_dir: Path = Field(
        default=Path("./var/data"),
        description="Local directory for derived state: full-text indexes (rebuilt from the catalog), "
        "vector tables and the image model (downloaded from the bucket), caches. It may be emptied at any "
        "time: a serving process fills it again from the bucket, never by embedding or training.",
    )
    redis_url: str | None = Field(
        default=None, description="redis://host:port/db; unset means embedded stores."
    )
    auth: Literal["on", "off"] = Field(default="on", description="Token validation on every service.")
    auth_url: str = Field(
        default="",
        description="Base URL of the token service, the issuer (`iss`) of its tokens that every service "
        "checks; unset: http://<host>:<auth_port>.",
    )
    predict_url: str = Field(
        default="", description="Predict service, for /recommendations; unset: http://<host>:<predict_port>."
    )
    vector_url: str | None = Field(default=None, description="Vector search service; unset means in-process.")
    analytics_url: str = Field(
        default="",
        description="Analytics service, for the merchandising console's Analytics pages; unset: "
        "http://<host>:<analytics_port>.",
    )
    edit_url: str = Field(
        default="",
        description="Recommendation edit service, for the merchandising console's containers and models; "
        "unset: http://<host>:<edit_port>.",
    )
    photos_dir: Path | None = Field(
        default=None,
        description="Product photos for the merchandising console: <dir>/<tenant>/images/<product id>.jpg "
        "(the shared demo data's layout); unset: product cards without photos.",
    )
    s3_endpoint: str | None = Field(default=None, description="Endpoint of an S3-compatible server.")
    s3_region: str = "us-east-1"
    storage_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="S3: seconds one storage operation may take, retries and the download included; past "
        "it the request is answered 503 storage_unavailable (with Retry-After) rather than left hanging. "
        "The largest object (a catalog, a model artifact) must upload and download within it.",
    )
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = None
    host: str = "127.0.0.1"
    search_port: int = 8080
    predict_port: int = 8081
    proxy_port: int = 8082
    vector_port: int = 8083
    edit_port: int = 8084
    rules_port: int = 8085
    auth_port: int = 8086
    analytics_port: int = 8087
    typesense_port: int = Field(
        default=8108, description="The demo's local Typesense server (`aisle serve`), the fashion fallback."
    )
    workers: int = Field(
        default=2, ge=1, description="Worker processes per service started by `aisle serve`."
    )
    max_body_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Largest request body a service reads, in bytes (1 MiB); a larger one is answered "
        "413 payload_too_large before it is parsed.",
    )
    max_upload_bytes: int = Field(
        default=9 * 1024 * 1024,
        ge=1024,
        description="Largest request body of a multipart upload route (POST /images/search), in bytes: "
        "9 MiB, an 8 MiB image (vectors/image_input.py MAX_IMAGE_BYTES) plus the multipart framing.",
    )
    max_bulk_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1024,
        description="Largest request body of a bulk write, in bytes: 32 MiB, a full batch of POST /events "
        "(10,000 events) or PUT /vectors (1,000 vectors of 1,280 numbers).",
    )
    catalog_check_seconds: float = Field(
        default=1.0,
        ge=0,
        description="Search: seconds a tenant's catalog version (and attribute configuration) is reused "
        "before storage is asked again, so a catalog import is served at most this long after its "
        "pointer is written, plus the time to build the full-text index of the new version.",
    )
    catalog_compact_seconds: float = Field(
        default=60.0,
        ge=0,
        description="Search: seconds between looks at the catalog change logs of the tenants this process "
        "writes or serves; one with new product writes is folded into a new catalog version, whose full "
        "index the search processes then build in the background (0: never in the background; `aisle "
        "catalog compact` still does). Writes are searchable before that: see "
        "AISLE_CATALOG_FOLLOW_SECONDS.",
    )
    catalog_follow_seconds: float = Field(
        default=0.02,
        ge=0,
        description="Search and predict: seconds between two reads of the change logs of the tenants whose "
        "index (search) or product table (predict) this process has open; the entries found are applied to "
        "the open index (deletes, adds, a commit) or table, so a product write is searchable, and a deleted "
        "product gone from recommendations, about this long after it is acknowledged (0: not followed; "
        "writes are then searchable at the next compaction, and followed by predict at its catalog check, "
        "every second at most). Each look is one GET per open tenant and worker (with S3, 50 requests a "
        "second each at the default).",
    )
    catalog_busy_follow_seconds: float = Field(
        default=0.1,
        ge=0,
        description="Search: the pause after a follower round that applied entries (at least "
        "AISLE_CATALOG_FOLLOW_SECONDS). A write stream is then applied in fewer, larger commits, each a "
        "few milliseconds of a worker's CPU whatever its size; a lone write is still found within "
        "AISLE_CATALOG_FOLLOW_SECONDS. Issue 41's bench (1,000 price changes a second, 8 searching "
        "connections): at 0.05 s lag p50 / p99 104 / 221 ms and search p99 27.2 ms, at 0.1 s 140 / 271 "
        "ms and 22.3 ms.",
    )
    catalog_settle_seconds: float = Field(
        default=5.0,
        ge=0,
        description="Search: a new catalog version made by compaction is indexed and swapped in once no "
        "product write has been applied for this long (or the writes applied since the open version "
        "reach AISLE_CATALOG_TAIL_ROWS). Until then the open index, which already serves every write, "
        "keeps following the log: building and catching up a version costs seconds of CPU per worker, "
        "which a write stream would otherwise pay every compaction. Suggestions, spelling and the "
        "price range's edges follow at the swap.",
    )
    catalog_tail_rows: int = Field(
        default=200_000,
        ge=0,
        description="Search: written products a process's open index may hold on top of its catalog "
        "version (about 1 KB of memory each) before a newer version is swapped in even while writes "
        "go on (see AISLE_CATALOG_SETTLE_SECONDS).",
    )
    catalog_rebuild_share: float = Field(
        default=0.25,
        ge=0,
        description="Search: an import whose products are at least this share of a tenant's catalog (and "
        "at least 5,000) is served by indexing the catalog version that includes it, built once per host "
        "right after the import, instead of every worker applying it product by product (0: always "
        "applied; src/aisle/search/bulk_hold.py).",
    )
    gc_freeze: bool = Field(
        default=True,
        description="Search: after start-up and after opening a tenant's index, collect the garbage once and "
        "freeze what is left (gc.freeze), so Python's cyclic collector never walks the index, rows and app "
        "again: under 1,000 price changes a second a search worker ran a full collection every 10-20 s, "
        "each 160-212 ms with every thread stopped (issue 41; src/aisle/core/memory.py).",
    )
    gil_switch_ms: float = Field(
        default=0.25,
        gt=0,
        le=100,
        description="Every service worker: Python's thread switch interval (sys.setswitchinterval), ms. "
        "A thread returning from native code that released the GIL (every tantivy call) waits up to this "
        "long for a busy thread to yield it. Issue 41's profile: at Python's 5 ms, the change-log follower "
        "applied about 700 product writes a second beside one busy thread, at 1 ms about 3,800; under "
        "1,000 writes a second and 8 searching connections, 1 ms gave search p99 7.8x its p99 without "
        "writes and 0.25 ms 4.2x, both with the follower's busy pause at 0.05 s (a lower interval costs a "
        "CPU-bound thread a few per cent).",
    )
    search_builds: Literal["process", "thread"] = Field(
        default="process",
        description="Search: where a search process builds what it finds missing for a catalog version (its "
        "index, rows and serving tables, and the tenant's suggestion tables): `process`, in a child process "
        "(src/aisle/search/build_child.py), so the build's temporaries never stay in the worker's heap "
        "(issue 42: at 300,000 products the builder kept 70-90 MiB more than the other worker); `thread`, in "
        "the process itself. A failed child leaves the build to the process.",
    )
    catalog_applier: Literal["process", "thread"] = Field(
        default="process",
        description="Search: where a process writes the change log into the copies of its open indexes "
        "and folds it into catalog versions: `process`, in child processes (one applier per search "
        "process, src/aisle/search/index/applier.py; a compaction in its own, at low CPU priority, "
        "src/aisle/catalog/compaction_child.py), so that work never holds the interpreter lock the "
        "searches need (issue 41: under 1,000 price changes a second, a search waited for it in every "
        "stage); `thread`, the process's own background threads.",
    )
    catalog_live_dir: Path | None = Field(
        default=None,
        description="Search: where a process keeps its private, writable copies of the indexes it applies "
        "the change log to (one per process and tenant, made again from the bucket after a restart, so a "
        "file system in memory loses nothing). Unset: /dev/shm/aisle-live where /dev/shm exists (a commit "
        "there skips the disk's fsync: about 8 ms against 45 on this project's ext4), else "
        "<data dir>/live; a copy that does not fit goes to <data dir>/live, hard-linked.",
    )

    def live_dirs(self) -> list[Path]:
        """Where live index copies go, first choice first (see ``catalog_live_dir``)."""
        fallback = self.data_dir / "live"
        if self.catalog_live_dir is not None:
            return [self.catalog_live_dir, fallback]
        shm = Path("/dev/shm")
        return [shm / "aisle-live", fallback] if shm.is_dir() and os.access(shm, os.W_OK) else [fallback]

    vectors_check_seconds: float = Field(
        default=5.0,
        ge=0,
        description="Search and vector services: seconds a tenant's vector table (or its absence) is "
        "reused before the data dir and the bucket are looked at again, so a newly published table is "
        "served at most this long after it lands, plus the time to download it.",
    )
    search_budget_ms: float = Field(
        default=250.0,
        gt=0,
        le=60_000,
        description="Search: milliseconds after a search starts past which it stops adding work and "
        "answers with what it has: no further relaxed or typo retrieval stage, no reranking (hybrid or "
        "learned) and no follow-up question. A search that needs more time than this on a loaded machine "
        "answers sooner, and less well.",
    )
    search_fast_lane: bool = Field(
        default=True,
        description="Search service: answer plain GET and POST /search requests without FastAPI's "
        "per-request work (aisle.services.search.fast_lane; the same answers, less CPU); false sends every "
        "one through the route.",
    )
    container_cache_seconds: float = Field(
        default=2.0,
        ge=0,
        description="Predict service: seconds a container read from storage (or its absence) is reused, "
        "so a container edit is seen by predict at most this long after it is written; 0 reads it on "
        "every request.",
    )

    storefront: bool = Field(
        default=True,
        description="The search service serves the demo storefront at /shop/ (InstantSearch widgets on "
        "Aisle), which hands each page a read-only token for one tenant (GET /shop/session) and relays "
        "its shopper events to the edit service; false turns all of /shop/ off (404).",
    )
    storefront_tenants: str = Field(
        default="",
        max_length=4096,
        description="With auth on, the tenants whose storefront page may get a read-only token from "
        "GET /shop/session (comma-separated; '*' every tenant; empty: none, so a tenant's catalog is "
        "never readable without a token it was given). `make run` opens the demo tenants.",
    )

    def storefront_open(self, tenant: str) -> bool:
        """Whether ``tenant``'s storefront page may get a page token (see ``storefront_tenants``)."""
        names = {t.strip() for t in self.storefront_tenants.split(",") if t.strip()}
        return "*" in names or tenant in names

    analytics: bool = Field(
        default=True,
        description="Record every answer that shows products, and every shopper event, to the analytics "
        "log in the bucket (Parquet, aisle.analytics); false records nothing (attribution tokens are still "
        "issued).",
    )
    analytics_flush_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Seconds between writes of a process's buffered answers and events to the bucket: the "
        "most a process killed with SIGKILL loses (SIGTERM writes the buffer first).",
    )
    analytics_buffer: int = Field(
        default=100_000,
        ge=1,
        description="Answers and events a process buffers at most; past it new ones are dropped and counted "
        "(aisle_analytics_dropped_total), never waited for.",
    )
    analytics_retention_days: int = Field(
        default=400,
        ge=1,
        description="Days of answers and events kept in the bucket; older day partitions are deleted by the "
        "analytics service once a day.",
    )
    attribution_window_seconds: float = Field(
        default=3600.0,
        gt=0,
        description="A conversion without an attribution token counts for the latest answer to the same "
        "visitor that showed the product at most this long before it (Google Cloud Retail's rule).",
    )

    @model_validator(mode="after")
    def _derive_urls(self) -> Settings:
        """Fill each unset service URL of :data:`DERIVED_URLS` from ``host`` and the service's port."""
        for url_field, port_field in DERIVED_URLS:
            if not getattr(self, url_field):
                setattr(self, url_field, f"http://{client_host(self.host)}:{getattr(self, port_field)}")
        return self


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment, with keyword overrides taking precedence."""
    return Settings(**overrides)  # type: ignore[arg-type]
