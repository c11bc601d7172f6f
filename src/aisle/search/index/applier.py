"""A search process's change-log writes done in a child process, so they never hold the searches' GIL.

Issue 41's profile of a search worker under 1,000 price changes a second and 8 searching connections
(py-spy, 30 s): the change-log follower took 14.6% of the worker's samples, yet each search took twice
the samples it took with no writes, in every stage alike (retrieve 2.3x, facets 2.3x, writing the
answer to the socket 2.6x): a search's thread waiting for the interpreter lock, taken by the follower's
document building each time a tantivy call gave it back. The worker's cores were not busy (1.80 of 2)
and search p99 was 1.9x-7x its p99 without writes.

So the writing half of a followed index (:class:`~aisle.search.index.live_writer.LiveWriter`: the
version's products with the log applied, the copy's tantivy writer, building each document) runs in one
child process per search process, ``python -m aisle.search.index.applier``, for every index the process
follows. The parent keeps what a search reads: its own reader of the copy, reloaded after each commit,
and the rows, ids and words of the products written (:class:`~aisle.search.index.live.LiveIndex`).

The protocol, over the child's stdin and stdout (one request at a time; :class:`Applier` serialises):
a request is one line of JSON, ``{"op": "open" | "write" | "close", "key": ...}``; the answer is one line
of JSON, ``{"ok": true, ..., "n": N}`` (or ``{"ok": false, "kind": "storage" | "error", "error": ...}``)
followed by N bytes of JSON. ``open`` loads the version's products and makes the copy (answer: its path
and the catalog's columns); ``write`` applies the log up to entry ``to``, read from the bucket by the
child, and commits (payload: the products touched, :data:`~aisle.search.index.live_writer.Touched`);
``close`` drops a copy. The child exits, removing its copies, when its stdin closes: when the parent
exits, however it exits. A child that died fails every writer it held, and the parent's indexes are
opened again on a new child.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from itertools import count
from pathlib import Path
from typing import IO, Any

import orjson

from aisle.catalog.changes import Entry, Head
from aisle.core.errors import StorageUnavailable
from aisle.core.tenant_config import AttributeConfiguration
from aisle.search.index.live_writer import Touched

log = logging.getLogger("aisle.search")

NICE = 5
"""The child's niceness (its tantivy merge threads too). Issue 41's scheduler figures for a search
worker's event-loop thread under 1,000 price changes a second (``/proc/<tid>/schedstat``, 35 s): on the
CPU 0.68 of the time and waiting in the run queue 0.31, against 0.93 and 0.06 with no writes, the
appliers' threads (each waking on every commit and merge) taking the cores from it. At nice 10 the
wait fell to 0.20, but the write lag's p50 rose to 313 ms (goal 200 ms: its p50 at nice 5, 104 ms)."""


class ApplierFailed(RuntimeError):
    """The child process failed a request, or is gone (its writers are then unusable)."""


class Applier:
    """The child process that writes this process's followed indexes (module docstring), started on
    first use and again after it died. ``storage_url``: the bucket the child reads catalogs and change
    logs from (the other storage settings come from the environment it inherits). Thread-safe."""

    def __init__(self, storage_url: str) -> None:
        self.storage_url = storage_url
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._keys = count(1)

    def _child(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            cmd = [sys.executable, "-m", "aisle.search.index.applier"]
            env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}  # serves nothing
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        return self._proc

    def call(
        self, proc: subprocess.Popen[bytes] | None, request: dict[str, Any]
    ) -> tuple[dict[str, Any], bytes]:
        """Send ``request`` to the child ``proc`` (None: the current one, started if needed) and return
        its answer and payload. Raises ApplierFailed (the child failed it, or ``proc`` is gone),
        StorageUnavailable (it could not read the bucket)."""
        with self._lock:
            child = self._child() if proc is None else proc
            if child is not self._proc or child.poll() is not None:
                raise ApplierFailed("the applier process this index was written by is gone")
            assert child.stdin is not None and child.stdout is not None
            try:
                child.stdin.write(orjson.dumps(request) + b"\n")
                child.stdin.flush()
                line = child.stdout.readline()
                answer = orjson.loads(line) if line else None
                payload = child.stdout.read(answer["n"]) if answer else b""
            except (OSError, ValueError) as exc:  # the pipe is out of step now: a new child, next time
                child.kill()
                raise ApplierFailed(f"the applier process failed: {exc}") from exc
            if answer is None:
                raise ApplierFailed(f"the applier process exited (code {child.wait()})")
        if not answer["ok"]:
            if answer["kind"] == "storage":
                raise StorageUnavailable(answer["error"])
            raise ApplierFailed(answer["error"])
        return answer, payload

    def open(
        self,
        tenant: str,
        version: str,
        sequence: int,
        path: Path,
        roots: list[Path],
        config: AttributeConfiguration,
        first_row: int,
    ) -> RemoteWriter:
        """A writer of the index built at ``path`` (as :class:`LiveWriter`'s arguments), in the child."""
        key = next(self._keys)
        request = {
            "op": "open", "key": key, "tenant": tenant, "version": version, "sequence": sequence,
            "path": str(path), "roots": [str(r) for r in roots], "config": config.model_dump(mode="json"),
            "first_row": first_row, "storage_url": self.storage_url,
        }  # fmt: skip
        proc = self._child_now()
        answer, _ = self.call(proc, request)
        return RemoteWriter(self, proc, key, Path(answer["copy"]), answer["columns"], sequence)

    def _child_now(self) -> subprocess.Popen[bytes]:
        with self._lock:
            return self._child()

    def close(self) -> None:
        """End the child (it removes its copies)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


class RemoteWriter:
    """A :class:`~aisle.search.index.live_writer.LiveWriter` in the applier's child process: ``copy``
    (the index it writes), ``columns`` (the catalog's), ``sequence`` (the last entry written)."""

    def __init__(
        self,
        applier: Applier,
        proc: subprocess.Popen[bytes],
        key: int,
        copy: Path,
        columns: list[str],
        sequence: int,
    ) -> None:
        self.applier, self.proc, self.key = applier, proc, key
        self.copy, self.columns, self.sequence = copy, columns, sequence

    def write(self, entries: Sequence[Entry | Head]) -> list[Touched]:
        """Have the child apply the log up to ``entries[-1]`` and commit; the products touched. Raises
        ApplierFailed, StorageUnavailable."""
        new = [e.seq for e in entries if e.seq > self.sequence]
        if not new:
            return []
        answer, payload = self.applier.call(self.proc, {"op": "write", "key": self.key, "to": new[-1]})
        self.sequence = int(answer["sequence"])
        return [(pid, row, fields, reworded) for pid, row, fields, reworded in orjson.loads(payload)]

    def close(self) -> None:
        with contextlib.suppress(ApplierFailed, StorageUnavailable):  # a child gone took its copies
            self.applier.call(self.proc, {"op": "close", "key": self.key})


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The child's loop: answer each request until ``requests`` ends, then remove every copy."""
    from aisle.catalog.changes import ChangeLog
    from aisle.catalog.store import CatalogStore
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants
    from aisle.search.index.live_writer import LiveWriter

    writers: dict[int, tuple[LiveWriter, Any]] = {}
    stores: dict[str, Tenants] = {}

    def handle(req: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        if req["op"] == "open":
            url = req["storage_url"]
            if url not in stores:
                settings = load_settings().model_copy(update={"storage_url": url})
                stores[url] = Tenants(open_blob_store_from_settings(settings))
            scope = stores[url].scope(req["tenant"])
            columns: list[str] = []

            def products() -> Any:
                frame = CatalogStore(scope).load(req["version"]).products
                columns.extend(frame.columns)
                return frame

            roots = [Path(r) for r in req["roots"]]
            config = AttributeConfiguration.model_validate(req["config"])
            writer = LiveWriter(
                req["tenant"], req["version"], req["sequence"], Path(req["path"]), roots, config, products,
                req["first_row"],
            )  # fmt: skip
            writers[req["key"]] = (writer, ChangeLog(scope))
            return {"copy": str(writer.copy), "columns": columns}, b""
        if req["op"] == "write":
            writer, changes = writers[req["key"]]
            entries = [e for e in changes.after(writer.sequence) if e.seq <= req["to"]]
            touched = writer.write(entries)
            return {"sequence": writer.sequence}, orjson.dumps(touched, default=str)
        closing = writers.pop(req["key"], None)
        if closing is not None:
            closing[0].close()
        return {}, b""

    try:
        for line in requests:
            try:
                answer, payload = handle(orjson.loads(line))
                answer = {"ok": True, **answer}
            except StorageUnavailable as exc:
                answer, payload = {"ok": False, "kind": "storage", "error": exc.message}, b""
            except Exception as exc:
                log.exception("the applier failed a request")
                answer, payload = {"ok": False, "kind": "error", "error": f"{type(exc).__name__}: {exc}"}, b""
            answers.write(orjson.dumps({**answer, "n": len(payload)}) + b"\n" + payload)
            answers.flush()
    finally:
        for writer, _ in writers.values():
            writer.close()


def main() -> None:
    """``python -m aisle.search.index.applier``: serve the parent's requests on stdin/stdout."""
    os.nice(NICE)  # here, not in a preexec_fn: the parent has threads
    # aisle serve stops its process group: exit through _serve's finally, which removes the copies
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    answers = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed may reach the protocol
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s [applier] %(message)s"
    )
    _serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
