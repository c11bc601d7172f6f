"""The token service's replay memory on a Redis that is killed and started again (its own redis-server).

While Redis is down the grant fails closed (503 ``temporarily_unavailable`` with ``Retry-After``); once it
is back the same process issues tokens again, and an assertion used before the crash is still refused
(its jti survived the crash: ``appendonly yes`` + ``appendfsync always``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from tests.conftest import require
from tests.support.auth import AuthKit
from tests.support.faults import REDIS_SERVER, RedisServer

from aisle.core.auth.assertion import JWT_BEARER
from aisle.services.auth.app import create_app


def grant(client: TestClient, assertion: str) -> Any:
    return client.post("/token", data={"grant_type": JWT_BEARER, "assertion": assertion})


def test_grant_fails_closed_while_redis_is_down_and_recovers(kit: AuthKit, tmp_path: Path) -> None:
    require(REDIS_SERVER is not None, "redis-server binary not found")
    redis = RedisServer(tmp_path / "redis")
    redis.start()
    key = kit.add_client("shop", ["fashion"])
    try:
        with TestClient(create_app(kit.settings(redis_url=redis.url), store=kit.store)) as client:
            used = kit.assertion("shop", key)
            assert grant(client, used).status_code == 200
            redis.kill()
            down = grant(client, kit.assertion("shop", key))
            assert down.status_code == 503, down.text
            assert down.json()["error"] == "temporarily_unavailable" and int(down.headers["Retry-After"]) >= 1
            redis.start()  # same port and directory; the service is not restarted
            assert grant(client, kit.assertion("shop", key)).status_code == 200
            replay = grant(client, used)
            assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    finally:
        redis.stop()
