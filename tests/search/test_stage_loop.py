"""The one stage loop's two drivers: ``blocking`` (a worker thread) and ``awaited`` (an event loop) run
the same steps to the same end: each call's answer is sent back, each call's error thrown in where the
call was yielded, and the steps' return value is the result."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

from aisle.search.stages.fallback import awaited, blocking


class _Call:
    """Stands in for an external call: answers ``outcome``, or raises it when it is an exception."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.made: list[str] = []

    def blocking(self) -> Any:
        self.made.append("blocking")
        return self._outcome()

    async def awaited(self) -> Any:
        self.made.append("awaited")
        return self._outcome()

    def _outcome(self) -> Any:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def _steps(log: list[str], calls: list[_Call]) -> Generator[Any, Any, str]:
    log.append(f"answered {(yield calls[0])}")
    try:
        yield calls[1]
    except LookupError as exc:  # a failed call is the steps' to handle
        log.append(f"refused {exc}")
    return "done"


@pytest.mark.parametrize("driver", ["blocking", "awaited"])
def test_both_drivers_run_the_same_steps_to_the_same_end(driver: str) -> None:
    log: list[str] = []
    calls = [_Call("page"), _Call(LookupError("down"))]
    steps = _steps(log, calls)
    result = blocking(steps) if driver == "blocking" else asyncio.run(awaited(steps))  # type: ignore[arg-type]
    assert (result, log) == ("done", ["answered page", "refused down"])
    assert [c.made for c in calls] == [[driver], [driver]]


@pytest.mark.parametrize("driver", ["blocking", "awaited"])
def test_an_error_the_steps_do_not_handle_leaves_the_loop(driver: str) -> None:
    steps = _steps([], [_Call(ValueError("bad")), _Call("unused")])
    with pytest.raises(ValueError, match="bad"):
        blocking(steps) if driver == "blocking" else asyncio.run(awaited(steps))  # type: ignore[arg-type]
