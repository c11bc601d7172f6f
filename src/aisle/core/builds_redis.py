"""The build board on Redis: every replica, on any machine, reads the builds any builder writes.

Keys (built only here): ``aisle:<tenant>:builds`` (a hash: artifact -> the :class:`~aisle.core.builds.Build`
as JSON) and ``aisle:builds:tenants`` (a set of the tenants with a hash, so :meth:`RedisBuildBoard.all`
needs no key scan). One ``HSET`` replaces a build's whole document, so a reader never sees half of one.

The board is advisory (it tells "being built" from "missing"; the artifacts are published complete
whatever it says), so a Redis failure never fails a build or a request: a write is dropped and a read
finds no build, each logged.
"""

from __future__ import annotations

import logging
import time

import orjson
import redis

from aisle.core.builds import Build, checked, group_by_tenant
from aisle.core.redis_connection import redis_client

log = logging.getLogger("aisle.builds")

TENANTS_KEY = "aisle:builds:tenants"


def _key(tenant: str) -> str:
    return f"aisle:{tenant}:builds"


def _parse(raw: bytes) -> Build | None:
    try:
        return checked(Build(**orjson.loads(raw)))
    except (orjson.JSONDecodeError, TypeError):
        return None


class RedisBuildBoard:
    """:class:`~aisle.core.builds.BuildBoard` over the Redis at ``url`` (``redis://host:port/db``)."""

    def __init__(self, url: str) -> None:
        self.client = redis_client(url)

    def write(self, build: Build) -> None:
        doc = orjson.dumps({**build.__dict__, "updated_at": time.time()})
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.hset(_key(build.tenant), build.artifact, doc)
            pipe.sadd(TENANTS_KEY, build.tenant)
            pipe.execute()
        except redis.RedisError as exc:
            log.warning(
                "build board (Redis) unavailable, %s/%s not reported: %s", build.tenant, build.artifact, exc
            )

    def get(self, tenant: str, artifact: str) -> Build | None:
        try:
            raw = self.client.hget(_key(tenant), artifact)
        except redis.RedisError as exc:
            log.warning("build board (Redis) unavailable: %s", exc)
            return None
        return None if raw is None else _parse(raw)  # type: ignore[arg-type]

    def building(self, tenant: str, artifact: str) -> Build | None:
        build = self.get(tenant, artifact)
        return build if build is not None and build.active else None

    def all(self) -> list[Build]:
        try:
            tenants = sorted(t.decode() for t in self.client.smembers(TENANTS_KEY))  # type: ignore[union-attr]
            pipe = self.client.pipeline(transaction=False)
            for tenant in tenants:
                pipe.hgetall(_key(tenant))
            hashes = pipe.execute()
        except redis.RedisError as exc:
            log.warning("build board (Redis) unavailable: %s", exc)
            return []
        found = []
        for fields in hashes:
            for artifact in sorted(fields):
                build = _parse(fields[artifact])
                if build is not None:
                    found.append(build)
        return found

    def by_tenant(self) -> dict[str, list[Build]]:
        return group_by_tenant(self.all())

    def clear(self, tenant: str) -> None:
        """Forget every build of ``tenant`` (tests, a deleted tenant)."""
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(_key(tenant))
        pipe.srem(TENANTS_KEY, tenant)
        pipe.execute()
