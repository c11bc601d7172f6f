"""The tenant's search query log, stored in its object-storage scope for autocomplete.

Layout under ``<tenant>/suggest/``::

    query_log.parquet   one row per distinct normalised query: ``query`` (Utf8, the most frequent
                        spelling as typed), ``key`` (Utf8, :func:`normalize` of it), ``count`` (Int64)
    query_log.json      {"version": "...", "queries": N, "searches": M, "source": "...", "updated_at": ...}

The pointer ``query_log.json`` is written after the data, and its ``version`` changes on every import,
so a reader sees a complete log and knows when to rebuild its suggestions.
"""

from __future__ import annotations

import csv
import io
import secrets
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson
import polars as pl

from aisle.core.errors import BadRequest, ErrorCode, TenantNotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.tenancy import Tenants
from aisle.search.normalize import normalize

LOG_DATA = "suggest/query_log.parquet"
LOG_POINTER = "suggest/query_log.json"
MAX_QUERY_CHARS = 200  # longer lines are not searches a shopper typed


@dataclass(frozen=True)
class ImportSummary:
    """What an import stored: distinct normalised queries and the searches they add up to."""

    queries: int
    searches: int
    lines: int
    skipped: int


def parse_query_log(path: Path) -> tuple[Counter[str], Counter[tuple[str, str]], int, int]:
    """Read a query log: one query per line, or (``.csv``) rows of ``query,count`` (header optional).

    Counts of the same query, after :func:`normalize`, are added up.

    Returns:
        (count per normalised key, count per (key, spelling as typed), lines read, lines skipped).
    Raises:
        BadRequest (``query_log_invalid``): the file cannot be read as UTF-8 text.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadRequest(f"cannot read query log {path}: {exc}", code=ErrorCode.QUERY_LOG_INVALID) from exc
    rows: list[tuple[str, int]] = []
    skipped = 0
    if path.suffix.lower() == ".csv":
        table = list(csv.reader(io.StringIO(text)))
        lines = len(table)
        for i, row in enumerate(table):
            if not row or not row[0].strip():
                skipped += 1
                continue
            if i == 0 and row[0].strip().lower() in ("query", "q", "search_term"):
                continue  # a header row
            count = 1
            if len(row) >= 2 and row[-1].strip():
                try:
                    count = int(float(row[-1]))
                except ValueError:
                    if i == 0:  # a header row such as "query,count"
                        continue
                    skipped += 1
                    continue
            rows.append((",".join(row[:-1]) if len(row) > 2 else row[0], count))
    else:
        raw_lines = text.splitlines()
        lines = len(raw_lines)
        rows = [(line, 1) for line in raw_lines]
    keys: Counter[str] = Counter()
    spellings: Counter[tuple[str, str]] = Counter()
    for query, count in rows:
        query = " ".join(query.split())
        key = normalize(query)
        if not key or count <= 0 or len(query) > MAX_QUERY_CHARS:
            skipped += 1
            continue
        keys[key] += count
        spellings[(key, query)] += count
    return keys, spellings, lines, skipped


class QueryLogStore:
    """Read and write one tenant's query log (``scope`` is the tenant's prefixed store)."""

    def __init__(self, scope: BlobStore) -> None:
        self.scope = scope

    def current_version(self) -> str | None:
        """The version of the stored log, or None when the tenant has none."""
        try:
            return str(orjson.loads(self.scope.get(LOG_POINTER))["version"])
        except BlobNotFound:
            return None

    def load(self) -> pl.DataFrame:
        """The stored log (columns ``query``, ``key``, ``count``); empty when there is none."""
        try:
            raw = self.scope.get(LOG_DATA)
        except BlobNotFound:
            return pl.DataFrame(schema={"query": pl.Utf8, "key": pl.Utf8, "count": pl.Int64})
        return pl.read_parquet(io.BytesIO(raw))

    def write(self, log: pl.DataFrame, *, source: str | None = None) -> str:
        """Store ``log`` (``query``, ``key``, ``count``) and make it current. Returns its version."""
        buf = io.BytesIO()
        log.select("query", "key", "count").write_parquet(buf, compression="zstd")
        self.scope.put(LOG_DATA, buf.getvalue())
        version = datetime.now(UTC).strftime("v%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
        pointer = {
            "version": version,
            "queries": log.height,
            "searches": int(log["count"].sum()) if log.height else 0,
            "source": source,
            "updated_at": datetime.now(UTC).isoformat(),
        }
        self.scope.put(LOG_POINTER, orjson.dumps(pointer))
        return version


def _as_frame(keys: Counter[str], spellings: Counter[tuple[str, str]]) -> pl.DataFrame:
    best: dict[str, tuple[int, str]] = {}
    for (key, query), count in spellings.items():
        if key not in best or (count, query) > best[key]:
            best[key] = (count, query)
    ordered = sorted(keys.items(), key=lambda kv: (-kv[1], kv[0]))
    return pl.DataFrame(
        {
            "query": [best[k][1] for k, _ in ordered],
            "key": [k for k, _ in ordered],
            "count": [c for _, c in ordered],
        },
        schema={"query": pl.Utf8, "key": pl.Utf8, "count": pl.Int64},
    )


def import_query_log_file(
    tenants: Tenants, tenant: str, path: Path, *, append: bool = False
) -> ImportSummary:
    """Store the queries of ``path`` as the tenant's query log (replacing it, or added to it).

    Raises:
        TenantNotFound: no such tenant in storage.
        BadRequest (``query_log_invalid``): unreadable file.
    """
    if not tenants.exists(tenant):
        raise TenantNotFound(tenant)
    keys, spellings, lines, skipped = parse_query_log(Path(path))
    store = QueryLogStore(tenants.scope(tenant))
    if append:
        for row in store.load().iter_rows(named=True):
            keys[row["key"]] += row["count"]
            spellings[(row["key"], row["query"])] += row["count"]
    frame = _as_frame(keys, spellings)
    store.write(frame, source=str(path))
    return ImportSummary(queries=frame.height, searches=int(sum(keys.values())), lines=lines, skipped=skipped)


def import_query_log(tenants: Tenants, tenant: str, path: Path) -> int:
    """Replace the tenant's query log with ``path`` (see :func:`parse_query_log` for the formats).

    Used by ``aisle demo`` for the Home Depot log. Returns the number of distinct queries stored.

    Raises:
        TenantNotFound: no such tenant in storage.
        BadRequest (``query_log_invalid``): unreadable file.
    """
    return import_query_log_file(tenants, tenant, path).queries
