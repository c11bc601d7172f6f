"""A lean HTTP/1.1 load generator for the benchmarks: keep-alive GETs over raw asyncio streams.

The client shares the machine's cores with the servers it measures, so it does as little as it can:
no URL parsing, no header objects, one ``readuntil`` for the head and one ``readexactly`` per body (or
per chunk of a ``Transfer-Encoding: chunked`` body, RFC 9112 section 7.1).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class LoadResult:
    """Latencies (ms, in completion order), wall time (s), non-200 answers, and the bodies if kept."""

    latencies_ms: list[float]
    seconds: float
    failed: int
    bodies: list[bytes]

    @property
    def rate(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds else 0.0


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length, chunked = None, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if length is not None:
        return status, await reader.readexactly(length)
    if not chunked:
        return status, b""
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return status, b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


async def get_many(
    port: int,
    paths: Sequence[str],
    clients: int,
    *,
    headers: dict[str, str] | None = None,
    keep_bodies: bool = False,
    posts: Sequence[bytes] | None = None,
) -> LoadResult:
    """GET every path once from ``clients`` keep-alive connections to 127.0.0.1:``port``; with
    ``posts``, POST ``posts[i]`` (a JSON body) to ``paths[i]`` instead."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    queue = list(reversed(range(len(paths))))
    latencies: list[float] = []
    bodies: list[bytes] = [b""] * len(paths) if keep_bodies else []
    failed = 0

    async def worker() -> None:
        nonlocal failed
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while queue:
                i = queue.pop()
                t = time.perf_counter()
                if posts is None:
                    writer.write(f"GET {paths[i]} HTTP/1.1\r\nhost: 127.0.0.1\r\n{extra}\r\n".encode())
                else:
                    writer.write(
                        f"POST {paths[i]} HTTP/1.1\r\nhost: 127.0.0.1\r\n{extra}"
                        f"content-type: application/json\r\ncontent-length: {len(posts[i])}\r\n\r\n".encode()
                        + posts[i]
                    )
                status, body = await _read_response(reader)
                latencies.append((time.perf_counter() - t) * 1000)
                failed += status != 200
                if keep_bodies:
                    bodies[i] = body
        finally:
            writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(clients, len(paths)))))
    return LoadResult(latencies, time.perf_counter() - start, failed, bodies)


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children (uvicorn's worker processes), from /proc."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(p) for p in children.read_text().split()] if children.exists() else []
    return [pid, *kids]


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of ``pid`` and its children, all threads (proc(5): stat fields 14, 15)."""
    total = 0
    for p in process_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICKS
