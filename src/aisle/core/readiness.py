"""Where a request may run: on the event loop or the thread pool (docs/style.md habit 7).

An engine whose requests are mostly CPU work answers, before running one, whether it has anything to
wait for (``SearchEngine.readiness``, ``PredictEngine.readiness``). The service runs a request that
waits for nothing on its event loop (the thread hop costs a sixth of a search's CPU, issue 18) and
any other on the thread pool, handing back what the engine looked up to decide so nothing is looked up
twice. The engine decides once, before any work: a request is never started inline and run again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Readiness(Generic[T]):
    """An engine's answer for one request: ``waits`` False when running it is CPU work only (the event
    loop may run it), True when it may wait for I/O (the thread pool); ``found`` what the engine looked
    up on the way, to pass back with the request (None when nothing was, or the lookup failed: the
    request then looks it up, or raises, where it runs)."""

    waits: bool
    found: T | None = None
