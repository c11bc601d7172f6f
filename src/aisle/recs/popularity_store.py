"""The popularity artifact of a tenant in object storage: immutable versions and a pointer written last.

Layout in the tenant's scope (beside the models' artifacts, :mod:`aisle.recs.registry`)::

    models/popularity/v<version>/items.parquet     item_id, popularity, trending, weighted (first)
    models/popularity/v<version>/windows.parquet   per (item, window): views, carts, purchases, ...
    models/popularity/v<version>/meta.json         PopularityRecord (after the tables)
    models/popularity/current.json                 {"version": N}, written last

Every file of a version is created with ``put_if_absent`` and never rewritten, so a reader that finds
the pointer finds whole tables, and two refreshes racing each write their own version (the pointer
names whichever finished last). The tables are computed by :mod:`aisle.recs.popularity`;
:func:`refresh` is what the edit service's ``refresh_popularity`` job runs
(:mod:`aisle.behaviour.popularity`, over the tenant's logged shopper events) and what
``aisle train CUSTOMERS_ALSO_VIEW`` runs over the events it trains on.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import orjson
import polars as pl
from pydantic import BaseModel, Field

from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.versions import claim_version
from aisle.recs.popularity import PopularityParams, PopularityTables, compute_popularity

POPULARITY_DIR = "models/popularity"
POINTER = f"{POPULARITY_DIR}/current.json"


class PopularityRecord(BaseModel):
    """One published version of a tenant's popularity tables."""

    version: int = 0
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    now: float = Field(description="End of every window, Unix seconds.")
    windows: list[float] = Field(description="Window lengths, days.")
    popularity_days: float
    trending_days: list[float]
    weights: dict[str, float]
    prior: float
    events: int = Field(description="Events in the longest window.")
    items: int = Field(description="Products with an event in the longest window.")
    info: dict[str, Any] = Field(default_factory=dict, description="Where the events came from.")


def current_version(scope: BlobStore) -> int | None:
    """The version the pointer names, or None before the first publish (or with a torn pointer)."""
    try:
        return int(orjson.loads(scope.get(POINTER))["version"])
    except (BlobNotFound, KeyError, TypeError, ValueError, orjson.JSONDecodeError):
        return None


def read_record(scope: BlobStore, version: int) -> PopularityRecord:
    """Raises BlobNotFound when ``version`` was never published."""
    return PopularityRecord.model_validate_json(scope.get(f"{POPULARITY_DIR}/v{version}/meta.json"))


def read_table(scope: BlobStore, version: int, name: str = "items") -> pl.DataFrame:
    """Table ``items`` or ``windows`` of ``version``. Raises BlobNotFound."""
    return pl.read_parquet(io.BytesIO(scope.get(f"{POPULARITY_DIR}/v{version}/{name}.parquet")))


def publish(
    scope: BlobStore, tables: PopularityTables, params: PopularityParams, info: dict[str, Any] | None = None
) -> PopularityRecord:
    """Write ``tables`` as the next version (tables, then ``meta.json``, then the pointer).

    Raises:
        Conflict: ``model_artifact_exists``, other writers kept taking the next version number
            (:func:`~aisle.core.storage.versions.claim_version`).
    """
    version = claim_version(scope, POPULARITY_DIR, "items.parquet", _parquet(tables.items))
    _claim(scope, version, "windows.parquet", _parquet(tables.windows))
    record = PopularityRecord(
        version=version,
        now=tables.now,
        windows=list(params.windows),
        popularity_days=params.popularity_days,
        trending_days=list(params.trending_days),
        weights=dict(params.weights),
        prior=params.prior,
        events=tables.events,
        items=tables.items.height,
        info=info or {},
    )
    _claim(scope, version, "meta.json", record.model_dump_json(indent=2).encode())
    scope.put(POINTER, orjson.dumps({"version": version}))
    return record


def refresh(
    scope: BlobStore,
    events: pl.DataFrame,
    *,
    now: float | None = None,
    params: PopularityParams | None = None,
    info: dict[str, Any] | None = None,
) -> PopularityRecord:
    """Compute the tables of ``events`` (:func:`~aisle.recs.popularity.compute_popularity`) and publish
    them. Raises ValueError (bad params or columns), Conflict (see :func:`publish`)."""
    params = params or PopularityParams()
    return publish(scope, compute_popularity(events, now, params), params, info)


def _claim(scope: BlobStore, version: int, name: str, data: bytes) -> bool:
    return scope.put_if_absent(f"{POPULARITY_DIR}/v{version}/{name}", data)


def _parquet(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf, compression="zstd")
    return buf.getvalue()
