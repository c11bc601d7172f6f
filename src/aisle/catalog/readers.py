"""Read catalog files (JSONL, CSV, Parquet; optionally gzipped) into an all-string polars frame.

Every frame has a ``_line`` column (1-based line of the source file; for Parquet the row number)
so that bad rows can be reported where a person can find them.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import polars as pl

from aisle.core.errors import BadRequest, ErrorCode

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class BadRow:
    """A row skipped on import: source line, and what was wrong with it."""

    line: int
    reason: str


def detect_format(path: Path) -> str:
    """``jsonl``, ``csv`` or ``parquet`` from the file name. Raises BadRequest for anything else."""
    name = path.name.lower().removesuffix(".gz")
    for ext, fmt in (
        (".jsonl", "jsonl"),
        (".ndjson", "jsonl"),
        (".json", "jsonl"),
        (".csv", "csv"),
        (".parquet", "parquet"),
    ):
        if name.endswith(ext):
            return fmt
    raise BadRequest(
        f"cannot tell the format of '{path.name}': use .jsonl, .csv or .parquet",
        code=ErrorCode.FORMAT_UNKNOWN,
    )


def _open_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.name.lower().endswith(".gz") else raw


def _to_str(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    return orjson.dumps(value).decode()


def read_jsonl(data: bytes, progress: Progress | None = None) -> tuple[pl.DataFrame, list[BadRow]]:
    """Parse JSON lines; a line that is not a JSON object becomes a :class:`BadRow`."""
    columns: dict[str, list[str | None]] = {}
    lines: list[int] = []
    bad: list[BadRow] = []
    raw_lines = data.splitlines()
    total = len(raw_lines)
    n = 0
    for number, line in enumerate(raw_lines, start=1):
        if progress and number % 20000 == 0:
            progress("read", number, total)
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            try:  # NaN / Infinity, as Python's json module writes them, are read as null
                obj = json.loads(line, parse_constant=lambda _: None)
            except ValueError:
                bad.append(BadRow(number, f"not valid JSON: {exc}"))
                continue
        if not isinstance(obj, dict):
            bad.append(BadRow(number, "not a JSON object"))
            continue
        for key, value in obj.items():
            col = columns.get(key)
            if col is None:
                col = columns[key] = [None] * n
            col.append(value if type(value) is str else _to_str(value))  # most values: no call
        n += 1
        lines.append(number)
        for col in columns.values():
            if len(col) < n:
                col.append(None)
    if progress:
        progress("read", total, total)
    series = [pl.Series(k, v, dtype=pl.Utf8) for k, v in columns.items()]
    # one frame with the line numbers: lines of objects without a key (``{}``) still count as rows
    return pl.DataFrame([*series, pl.Series("_line", lines, dtype=pl.Int64)]), bad


def read_csv(data: bytes) -> tuple[pl.DataFrame, list[BadRow]]:
    """Parse CSV with a header row; every value is read as text."""
    try:
        frame = pl.read_csv(io.BytesIO(data), infer_schema=False)
    # OSError: polars decompresses data that starts like a zstd or deflate stream, and a corrupt one
    # fails there ("incomplete frame", "corrupt deflate stream"; found by the bytes fuzz test)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise BadRequest(
            f"the CSV file cannot be parsed: {exc}", code=ErrorCode.CATALOG_FILE_INVALID
        ) from exc
    return frame.with_row_index("_line", offset=2).with_columns(pl.col("_line").cast(pl.Int64)), []


def read_parquet(data: bytes) -> tuple[pl.DataFrame, list[BadRow]]:
    try:
        frame = pl.read_parquet(io.BytesIO(data))
    except Exception as exc:  # pyarrow/polars raise several types for a corrupt file
        raise BadRequest(
            f"the Parquet file cannot be read: {exc}", code=ErrorCode.CATALOG_FILE_INVALID
        ) from exc
    frame = frame.with_columns(
        [pl.col(c).cast(pl.Utf8) if frame.schema[c] != pl.Utf8 else pl.col(c) for c in frame.columns]
    )
    return frame.with_row_index("_line", offset=1).with_columns(pl.col("_line").cast(pl.Int64)), []


def read_catalog_file(
    path: Path, fmt: str | None = None, progress: Progress | None = None
) -> tuple[pl.DataFrame, list[BadRow]]:
    """Read ``path`` into an all-Utf8 frame plus the rows that could not be parsed at all.

    Raises:
        BadRequest: unknown format, unreadable file.
    """
    if not path.is_file():
        raise BadRequest(f"catalog file '{path}' does not exist", code=ErrorCode.CATALOG_FILE_MISSING)
    fmt = fmt or detect_format(path)
    return read_catalog_bytes(_open_bytes(path), fmt, progress)


def read_catalog_bytes(
    data: bytes, fmt: str, progress: Progress | None = None
) -> tuple[pl.DataFrame, list[BadRow]]:
    """Read a catalog file's bytes (``fmt``: jsonl, csv or parquet; gzipped or not, told by its magic
    number) into an all-Utf8 frame plus the rows that could not be parsed at all.

    Raises:
        BadRequest: unknown format, unreadable data.
    """
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise BadRequest(
                f"the gzipped catalog cannot be read: {exc}", code=ErrorCode.CATALOG_FILE_INVALID
            ) from exc
    if fmt == "jsonl":
        return read_jsonl(data, progress)
    if fmt == "csv":
        return read_csv(data)
    if fmt == "parquet":
        return read_parquet(data)
    raise BadRequest(
        f"unknown catalog format '{fmt}': use jsonl, csv or parquet", code=ErrorCode.FORMAT_UNKNOWN
    )
