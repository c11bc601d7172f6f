"""Product rows in files beside their index, read by every search worker of a host (issue 42).

A search worker holds every open tenant's returned fields as :class:`~aisle.search.index.rows.
ProductRows`: one buffer of pickled value tuples and its offsets. Built in each worker, that buffer was
a private copy per worker (at 1M generated products the tenant added about 1.5 GiB of heap to each of
two workers, the second as much as the first: issue 42's bench_scale), and building it left freed
temporaries behind in each. Written once beside the index it belongs to (an index directory is one
catalog version under one attribute configuration: :func:`~aisle.search.index.writer.index_dir`) and
read from there, its pages are in the page cache once and shared by every worker. The offsets are
mapped; the values are read with ``pread`` (:class:`~aisle.core.mapped.FileSlices`): mapped, the
kernel's read-around on each page fault had pulled 435 of the 440 MiB of a million rows into the
resident memory of a worker that served 1,000 searches (20 random rows each).

Layout, in ``<index dir>/rows-v1/`` (written to a temporary directory and renamed into place, so a
reader never sees half of it; two workers writing at once keep the first): ``fields.json`` (the row
keys), ``offsets.bin`` (``len + 1`` native int64), ``values.bin`` (the pickles), ``DONE``.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable
from pathlib import Path

import orjson

from aisle.core.atomic_dir import atomic_directory
from aisle.core.mapped import FileSlices, map_file
from aisle.search.index.rows import ProductRows

log = logging.getLogger("aisle.search")

ROWS_DIR = "rows-v1"
_DONE = "DONE"


def save_rows(rows: ProductRows, dest: Path) -> None:
    """Write ``rows`` into directory ``dest`` (see the module). Raises OSError (disk full, read-only)."""
    with atomic_directory(dest, _DONE) as tmp:
        (tmp / "fields.json").write_bytes(orjson.dumps(list(rows.fields)))
        buffer, offsets = rows.parts()
        with (tmp / "offsets.bin").open("wb") as fh:
            (offsets if isinstance(offsets, array) else array("q", offsets)).tofile(fh)
        (tmp / "values.bin").write_bytes(buffer)
        (tmp / _DONE).write_text("ok")


def load_rows(dest: Path) -> ProductRows | None:
    """The rows written into ``dest``: offsets mapped, values read with ``pread`` (:class:`~aisle.core.
    mapped.FileSlices`: a page of rows is a few random reads, through the host's page cache); None when
    there are none (or not all of them)."""
    if not (dest / _DONE).exists():
        return None
    fields = orjson.loads((dest / "fields.json").read_bytes())
    offsets = map_file(dest / "offsets.bin")
    view = memoryview(offsets).cast("q") if offsets else array("q", [0])
    return ProductRows.mapped(fields, FileSlices(dest / "values.bin"), view)


def shared_rows(index_path: Path, build: Callable[[], ProductRows]) -> ProductRows:
    """The rows of the index at ``index_path``: mapped from its ``rows-v1`` files, written first from
    ``build()`` when missing. When they cannot be written the built rows are served from memory."""
    dest = index_path / ROWS_DIR
    found = load_rows(dest)
    if found is not None:
        return found
    built = build()
    try:
        save_rows(built, dest)
    except OSError as exc:
        log.warning("rows of %s kept in memory, not shared (%s)", index_path, exc)
        return built
    return load_rows(dest) or built
