"""The change-log follower's rhythm: a write stream is applied in fewer, larger commits (the pause after
a round that applied entries is the busy one), a lone write is looked for at the short interval."""

from __future__ import annotations

from aisle.search.follower import LogFollower


class _Registry:
    def loaded(self) -> list[str]:
        return []


def test_the_pause_is_the_busy_one_only_after_a_round_that_applied_entries() -> None:
    follower = LogFollower(_Registry(), 0.02, 0.1)  # type: ignore[arg-type]
    assert follower.pause_after({"shop": 0}) == 0.1  # first seen: applied
    assert follower.pause_after({"shop": 0}) == 0.02  # nothing new
    assert follower.pause_after({"shop": 3}) == 0.1
    assert follower.pause_after({"shop": 3, "other": None}) == 0.02  # a log that could not be read
    assert LogFollower(_Registry(), 0.5, 0.1).busy_every == 0.5  # type: ignore[arg-type]  # never shorter
