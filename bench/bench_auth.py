"""Token service throughput and per-request validation cost.

Prints:
* tokens issued per second through ``POST /token`` over real HTTP (the service under uvicorn in its own
  process on a loopback port, one worker; a bounded number of requests over 8 keep-alive connections), with
  the in-process replay store and, when Redis runs on 127.0.0.1:6379, with the Redis one;
* the time the Authorizer dependency adds to a request, p50/p99 in ms: for a token already seen (the
  normal case: clients reuse a token for its 15-minute life) and for a first-seen token (signature check);
* the same measured end to end: p50/p99 of a trivial route with and without the dependency (ASGI).

(No ``from __future__ import annotations``: FastAPI resolves the annotations of the route built in a
function.)
"""

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

import httpx
from fastapi import Depends, FastAPI
from starlette.requests import Request
from tests.support.auth import AuthKit, free_port

from aisle.core.auth.assertion import JWT_BEARER
from aisle.core.auth.dependencies import Authorizer, Principal
from aisle.core.storage import open_blob_store

TOKEN_REQUESTS = 2000
CONNECTIONS = 8
VALIDATIONS = 5000


def _percentiles(samples_s: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_s)
    return ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.99)] * 1000


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def bench_token_endpoint(root: Path, redis_url: str | None) -> float:
    """Tokens/s of one uvicorn worker answering ``TOKEN_REQUESTS`` grants from ``CLIENT_THREADS`` threads."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    store = open_blob_store(f"file://{root}")
    kit = AuthKit(store, auth_url=url)
    key = kit.add_client("bench", ["fashion"], ["search:read"])
    assertions = [kit.assertion("bench", key) for _ in range(TOKEN_REQUESTS)]
    env = {**os.environ, "AISLE_STORAGE_URL": f"file://{root}", "AISLE_AUTH_URL": url}
    env.pop("AISLE_REDIS_URL", None)
    if redis_url:
        env["AISLE_REDIS_URL"] = redis_url
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "aisle.services.auth.app:create_app",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen([*cmd, "--log-level", "warning", "--no-access-log"], env=env)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("token service did not start")
            time.sleep(0.1)
        bodies = [urlencode({"grant_type": JWT_BEARER, "assertion": a}).encode() for a in assertions]
        asyncio.run(_post_all(port, bodies[:20]))  # warm up
        start = time.perf_counter()
        statuses = asyncio.run(_post_all(port, bodies[20:]))
        elapsed = time.perf_counter() - start
        issued = statuses.count(200)
        if issued != len(bodies) - 20:
            raise RuntimeError(f"only {issued} of {len(bodies) - 20} grants succeeded: {set(statuses)}")
        return issued / elapsed
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def _post_all(port: int, bodies: list[bytes]) -> list[int]:
    """POST each form body to /token over ``CONNECTIONS`` keep-alive connections; the statuses.

    A minimal HTTP/1.1 client on asyncio streams (like wrk): the load generator shares the machine's CPU
    with the service, so it must cost far less than a full client library per request.
    """
    queue = list(reversed(bodies))
    statuses: list[int] = []

    async def connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while queue:
                body = queue.pop()
                head = (
                    f"POST /token HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n"
                )
                writer.write(head.encode() + body)
                status_line = await reader.readline()
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                statuses.append(int(status_line.split()[1]))
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(CONNECTIONS)))
    return statuses


def _request(token: str) -> Request:
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/items",
        "query_string": b"tenant=fashion",
        "headers": [(b"authorization", f"Bearer {token}".encode())],
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    return Request(scope, receive)


async def _time_dependency(kit: AuthKit) -> dict[str, tuple[float, float]]:
    authorizer = Authorizer(kit.settings(), kit.store)
    dependency = authorizer.require("search:read")
    token = kit.token(["fashion"])
    await dependency(_request(token))  # JWKS fetched once
    warm = []
    for _ in range(VALIDATIONS):
        request = _request(token)
        t = time.perf_counter()
        await dependency(request)
        warm.append(time.perf_counter() - t)
    cold = []
    for i in range(1000):
        request = _request(kit.token(["fashion"], client_id=f"c{i}"))
        t = time.perf_counter()
        await dependency(request)
        cold.append(time.perf_counter() - t)
    return {"warm": _percentiles(warm), "cold": _percentiles(cold)}


async def _time_end_to_end(kit: AuthKit) -> dict[str, tuple[float, float]]:
    authorizer = Authorizer(kit.settings(), kit.store)
    app = FastAPI()

    @app.get("/open")
    async def open_route(tenant: str) -> dict[str, str]:
        return {"tenant": tenant}

    @app.get("/items")
    async def items(
        tenant: str, principal: Annotated[Principal | None, Depends(authorizer.require("search:read"))]
    ) -> Any:
        return {"tenant": tenant}

    headers = {"Authorization": f"Bearer {kit.token(['fashion'])}"}
    out = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        for path in ("/open", "/items"):
            for _ in range(200):
                await client.get(path, params={"tenant": "fashion"}, headers=headers)
            samples = []
            for _ in range(3000):
                t = time.perf_counter()
                r = await client.get(path, params={"tenant": "fashion"}, headers=headers)
                samples.append(time.perf_counter() - t)
                assert r.status_code == 200
            out[path] = _percentiles(samples)
    return out


def main(data_dir: Path) -> None:
    """Run the benchmark (``data_dir`` is unused: the bench makes its own client and keys)."""
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, 1-minute load average {load:.1f} (figures drop above the CPUs)")
    with tempfile.TemporaryDirectory() as tmp:
        rate = bench_token_endpoint(Path(tmp) / "mem", None)
        print(
            f"token endpoint, in-process jti store: {rate:7.0f} tokens/s  ({TOKEN_REQUESTS} grants, 1 worker)"
        )
        if _redis_up():
            rate = bench_token_endpoint(Path(tmp) / "redis", "redis://127.0.0.1:6379/15")
            print(f"token endpoint, Redis jti store:      {rate:7.0f} tokens/s  ({TOKEN_REQUESTS} grants)")
        else:
            print("token endpoint, Redis jti store: skipped (no Redis on 127.0.0.1:6379)")
        kit = AuthKit(open_blob_store(f"file://{Path(tmp) / 'dep'}"), auth_url="http://bench")
        dep = asyncio.run(_time_dependency(kit))
        for name, label in (("warm", "token seen before"), ("cold", "first-seen token")):
            p50, p99 = dep[name]
            print(f"validation added per request ({label}): p50 {p50:.3f} ms  p99 {p99:.3f} ms")
        e2e = asyncio.run(_time_end_to_end(kit))
        (o50, o99), (a50, a99) = e2e["/open"], e2e["/items"]
        print(
            f"end to end (ASGI): open route p50 {o50:.3f} / p99 {o99:.3f} ms; "
            f"with auth p50 {a50:.3f} / p99 {a99:.3f} ms; added p50 {a50 - o50:.3f} ms"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data"))
