"""Where shopper behaviour lives in the bucket: every path of a tenant's ``analytics/`` folder, named once.

The analytics log writes here, the behaviour engine publishes its tables here, and search's ranker reads
them back; each names its paths through this module (it sits in ``core`` so that all three may import
it), so no call site spells the layout itself. Layout in the bucket::

    <tenant>/analytics/<table>/date=YYYY-MM-DD/<writer>-<seq>.parquet   the log (answers, outcomes)
    <tenant>/analytics/rollups/date=YYYY-MM-DD/<fingerprint>.parquet    a closed day's roll-up
    <tenant>/analytics/simulated.json                                   the days the demo simulated
    <tenant>/analytics/behaviour/v<version>/<table>.parquet             behaviour tables (written first)
    <tenant>/analytics/behaviour/v<version>/meta.json                   their record (written next)
    <tenant>/analytics/behaviour/current.json                           {"version": N}, written last

The log is one writer over the whole bucket (records name their tenant), so its paths include the tenant;
the rest is read and written through the tenant's scope (:func:`aisle.core.tenancy.tenant_scope`), so
those paths start at ``analytics/``.
"""

from __future__ import annotations

from datetime import date

ROOT = "analytics"
"""The folder of a tenant's analytics (in its scope)."""
ROLLUPS = "rollups"
"""The table of closed days' roll-ups (:mod:`aisle.analytics.rollups`), expired with the log."""
SIMULATED = f"{ROOT}/simulated.json"
"""In the tenant's scope: the periods of its log that the demo simulated, one per source."""
BEHAVIOUR_DIR = f"{ROOT}/behaviour"
"""In the tenant's scope: the folder of the behaviour tables' versions."""
BEHAVIOUR_POINTER = f"{BEHAVIOUR_DIR}/current.json"
"""In the tenant's scope: ``{"version": N}``, the current behaviour version (written last)."""


def table_dir(tenant: str, table: str) -> str:
    """``<tenant>/analytics/<table>``: one log table's folder (``answers``, ``outcomes``, ``rollups``)."""
    return f"{tenant}/{ROOT}/{table}"


def partition(tenant: str, table: str, day: date) -> str:
    """``<tenant>/analytics/<table>/date=YYYY-MM-DD``: one day's folder of one table."""
    return f"{table_dir(tenant, table)}/date={day.isoformat()}"


def log_file(tenant: str, table: str, day: date, writer: str, seq: int) -> str:
    """``<partition>/<writer>-<seq>.parquet``: one flushed batch of one writer (``seq`` zero-padded to 8)."""
    return f"{partition(tenant, table, day)}/{writer}-{seq:08d}.parquet"


def rollup_file(tenant: str, day: date, fingerprint: str) -> str:
    """``<tenant>/analytics/rollups/date=YYYY-MM-DD/<fingerprint>.parquet``: a closed day's roll-up."""
    return f"{partition(tenant, ROLLUPS, day)}/{fingerprint}.parquet"


def behaviour_file(version: int, name: str) -> str:
    """In the tenant's scope: ``analytics/behaviour/v<version>/<name>`` (a table's ``.parquet`` or
    ``meta.json``)."""
    return f"{BEHAVIOUR_DIR}/v{version}/{name}"
