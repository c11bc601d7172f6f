"""The background loop: a failed round is logged and the loop goes on; every 0 starts nothing."""

from __future__ import annotations

from tests.support.waiting import wait_until

from aisle.core.background import BackgroundLoop


class _Rounds(BackgroundLoop):
    name = "test-rounds"

    def __init__(self, every: float) -> None:
        super().__init__(every)
        self.rounds = 0

    def tick(self) -> float:
        self.rounds += 1
        if self.rounds == 1:
            raise RuntimeError("the first round fails")
        return self.every


def test_a_failed_round_does_not_end_the_loop() -> None:
    loop = _Rounds(0.01)
    loop.start()
    assert loop.running
    wait_until(lambda: loop.rounds >= 3, "rounds after the failed one")
    loop.stop()
    assert not loop.running


def test_every_zero_starts_no_thread() -> None:
    loop = _Rounds(0)
    loop.start()
    assert not loop.running and loop.rounds == 0
    loop.stop()
