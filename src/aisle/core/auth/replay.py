"""Single-use ``jti`` memory for client assertions (RFC 7523 section 3, item 7): the protocol.

Backends: ``replay_memory.py`` and ``replay_redis.py``, chosen in ``replay_resolver.py``.

A key is remembered until the assertion it came from has expired; after that the assertion itself is
refused for its ``exp``, so the memory can forget it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class ReplayStoreUnavailable(Exception):
    """The replay memory cannot be reached (e.g. Redis is down); the grant must fail closed."""


@runtime_checkable
class JtiStore(Protocol):
    """Remembers assertion ids so each one is accepted once."""

    def first_use(self, key: str, expires_at: float) -> bool:
        """Record ``key`` until ``expires_at`` (unix seconds).

        Returns True the first time a key is seen, False for a replay (atomic: of two concurrent calls
        with the same key exactly one gets True). Raises :class:`ReplayStoreUnavailable`.
        """
        ...
