"""Behaviour features as artifacts in the bucket: immutable versions and a pointer written last.

Layout in the tenant's scope::

    analytics/behaviour/v<version>/<table>.parquet   query_product, product, query, clicks (written first)
    analytics/behaviour/v<version>/meta.json         BehaviourRecord (written after the tables)
    analytics/behaviour/current.json                 {"version": N}, written last

(named in :mod:`aisle.core.analytics_layout`, which search's ranker reads them back through).
A reader that finds the pointer finds whole tables. The Parquet files are plain, so Spark reads a large
tenant's features with ``spark.read.parquet(".../analytics/behaviour/v<N>/query_product.parquet")``.
:func:`refresh` is the job: it reads the log's last 90 days, computes the tables
(:mod:`aisle.behaviour.tables`) and publishes them.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from aisle.analytics.log import ParquetLog, day_of
from aisle.behaviour.tables import DAY_S, WINDOWS, compute
from aisle.core import analytics_layout as layout
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.versions import claim_version
from aisle.core.tenancy import tenant_scope

TABLES = ("query_product", "product", "query", "clicks")


class BehaviourRecord(BaseModel):
    """One published version of a tenant's behaviour features."""

    version: int
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    until: float = Field(description="End of the last window, Unix seconds.")
    windows: list[int]
    searches: int = Field(description="Search answers in the longest window.")
    clicks: int = Field(description="Clicks on them (tokened, each event id once).")
    queries: int = Field(description="Distinct queries searched.")
    propensities: list[float] | None = Field(
        None, description="Examination propensity per position (position 1 = 1), estimated from the log."
    )
    propensity_pairs: int = 0
    propensity_across_arms: int = Field(
        0, description="Of those pairs, the ones an experiment's arms showed at different positions."
    )
    rows: dict[str, int] = Field(default_factory=dict)


class BehaviourStore:
    """Publish and read a tenant's behaviour features (see module docstring)."""

    def __init__(self, store: BlobStore) -> None:
        self.store = store

    def _scope(self, tenant: str) -> BlobStore:
        return tenant_scope(self.store, tenant)

    def current(self, tenant: str) -> BehaviourRecord | None:
        """The version the pointer names, or None before the first refresh."""
        scope = self._scope(tenant)
        try:
            version = int(orjson.loads(scope.get(layout.BEHAVIOUR_POINTER))["version"])
            return BehaviourRecord.model_validate_json(scope.get(layout.behaviour_file(version, "meta.json")))
        except BlobNotFound:
            return None

    def table(self, tenant: str, name: str, version: int | None = None) -> pa.Table:
        """One table of ``version`` (default: the current one).

        Raises:
            BlobNotFound: no such version or table (``name`` one of :data:`TABLES`).
        """
        if version is None:
            record = self.current(tenant)
            if record is None:
                raise BlobNotFound(f"{tenant}/{layout.BEHAVIOUR_POINTER}")
            version = record.version
        return pq.read_table(
            io.BytesIO(self._scope(tenant).get(layout.behaviour_file(version, f"{name}.parquet")))
        )

    def publish(self, tenant: str, tables: dict[str, pa.Table], record: BehaviourRecord) -> BehaviourRecord:
        """Write the tables, then the record, then the pointer; ``record.version`` becomes the next free
        version number, taken by creating its first table
        (:func:`~aisle.core.storage.versions.claim_version`: two refreshes racing each get their own).

        Raises:
            Conflict: ``model_artifact_exists``, other writers kept taking the next version number.
        """
        scope = self._scope(tenant)
        first, *rest = TABLES
        version = claim_version(scope, layout.BEHAVIOUR_DIR, f"{first}.parquet", _parquet(tables[first]))
        for name in rest:
            scope.put(layout.behaviour_file(version, f"{name}.parquet"), _parquet(tables[name]))
        record = record.model_copy(
            update={"version": version, "rows": {n: tables[n].num_rows for n in TABLES}}
        )
        scope.put(layout.behaviour_file(version, "meta.json"), record.model_dump_json(indent=2).encode())
        scope.put(layout.BEHAVIOUR_POINTER, orjson.dumps({"version": version}))
        return record


def refresh(log: ParquetLog, tenant: str, now: float | None = None) -> BehaviourRecord:
    """The refresh job: compute the tenant's behaviour tables over the log's last ``max(WINDOWS)`` days
    before ``now`` (default: the time now) and publish them as the next version."""
    now = datetime.now(UTC).timestamp() if now is None else now
    first = day_of(now - max(WINDOWS) * DAY_S)
    last = day_of(now) + timedelta(days=1)
    tables, propensities = compute(
        log.files(tenant, "answers", first, last), log.files(tenant, "outcomes", first, last), now
    )
    longest = tables["query"].filter(pa.compute.equal(tables["query"]["window_days"], max(WINDOWS)))
    clicks = tables["clicks"]
    record = BehaviourRecord(
        version=0,
        until=now,
        windows=list(WINDOWS),
        searches=int(pa.compute.sum(longest["searches"]).as_py() or 0),
        clicks=int(pa.compute.sum(clicks["clicks"]).as_py() or 0),
        queries=longest.num_rows,
        propensities=list(propensities.theta) if propensities is not None else None,
        propensity_pairs=propensities.pairs if propensities is not None else 0,
        propensity_across_arms=propensities.across_rankings if propensities is not None else 0,
    )
    return BehaviourStore(log.store).publish(tenant, tables, record)


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()
