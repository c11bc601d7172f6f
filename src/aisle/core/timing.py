"""Named durations of one request, for its ``Server-Timing`` header (W3C Server Timing).

The service's ASGI middleware opens a list per request (:func:`open_timings`); code anywhere below it,
including a route run in the thread pool (the context, and so the list, is shared), adds entries with
:func:`add_timing`. Outside a request (the CLI, tests of an engine) nothing is recorded and
:func:`add_timing` costs one context-variable lookup.
"""

from __future__ import annotations

from contextvars import ContextVar

Timings = list[tuple[str, float]]

_timings: ContextVar[Timings | None] = ContextVar("aisle_timings", default=None)


def open_timings() -> Timings:
    """A fresh list for this request's durations: ``(name, seconds)`` in the order they were added."""
    timings: Timings = []
    _timings.set(timings)
    return timings


def add_timing(name: str, seconds: float) -> None:
    """Add ``seconds`` under ``name`` to the current request's timings (a no-op outside a request)."""
    timings = _timings.get()
    if timings is not None:
        timings.append((name, seconds))


def timing_enabled() -> bool:
    """Whether a request collects timings (lets a caller skip taking the time at all)."""
    return _timings.get() is not None
