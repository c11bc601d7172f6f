"""Waiting for something a test started (a process, a background job, a refresh) without a deadline of
its own: pytest-timeout bounds every test (``timeout`` in pyproject.toml, ``--timeout=60`` in
``make check``) and fails one that waits forever with the stacks of its threads, this wait among them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T], what: str, *, every: float = 0.05) -> T:
    """Call ``check`` every ``every`` seconds until it returns a truthy value, and return that value.

    ``what`` names the wait (printed once, so a timed-out test's captured output says what it waited
    for). ``check`` may raise :class:`AssertionError` to stop waiting: a process that died, say.
    """
    print(f"waiting until {what}")
    while True:
        value = check()
        if value:
            return value
        time.sleep(every)
