"""Give the C heap's freed memory back to the system after a large build, and keep the cyclic garbage
collector off what a process keeps for long (:func:`freeze_heap`).

Opening a tenant's index and building its suggestions allocate hundreds of megabytes that are freed
again (polars frames, lists of candidates); glibc keeps much of it in the process's heap, where it
counts in the worker's resident memory for good. ``malloc_trim(3)`` returns the free pages at the top
of each arena and, since glibc 2.8, the whole free pages inside them. Measured on a generated tenant of
100,000 products (issue 42, ``bench_scale``): the PSS the tenant adds to each of two search workers went
from 276 to 244 MiB (both, after the searches: 554 to 497 MiB); in one process, a warm-up's 270 MiB of
anonymous memory became 231 MiB after a trim.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging

log = logging.getLogger("aisle")
_LIBC: ctypes.CDLL | None = None
_TRIED = False


def release_freed_memory() -> bool:
    """Call glibc's ``malloc_trim(0)``; True when memory was given back, False when there was none to
    give or the C library has no ``malloc_trim`` (musl, macOS). Never raises."""
    global _LIBC, _TRIED
    if not _TRIED:
        _TRIED = True
        try:
            name = ctypes.util.find_library("c")
            libc = ctypes.CDLL(name) if name else None
            _LIBC = libc if libc is not None and hasattr(libc, "malloc_trim") else None
        except OSError:
            _LIBC = None
    if _LIBC is None:
        return False
    try:
        return bool(_LIBC.malloc_trim(0))
    except Exception:  # a trim is an optimisation: never a failure of the build it follows
        log.debug("malloc_trim failed", exc_info=True)
        return False


def freeze_heap() -> int:
    """Collect the garbage, then move every object the cyclic collector tracks into its permanent
    generation (``gc.freeze``), so no later collection walks them again; returns how many are frozen.
    Objects frozen are still freed when their last reference goes (a cycle among them is not).

    Call after a process has loaded what it keeps for long (a search worker's opened indexes). Issue
    41's probe of a search worker under 1,000 price changes a second (``gc.callbacks``): a full
    collection every 10-20 s, each 160-212 ms with all threads stopped, over 240,000 objects (the
    tenant's index, rows, id maps and the app); the searches queued behind it made the stream's search
    p99. Frozen, a full collection walks only what was allocated since (in process, fashion's open
    index: 69 ms -> 0 ms). See https://docs.python.org/3/library/gc.html#gc.freeze."""
    gc.unfreeze()  # what was frozen before and has become garbage since (a retired index) is collected
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
