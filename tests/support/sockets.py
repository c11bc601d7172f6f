"""Loopback sockets for tests of remote services: free ports, and a server that never answers."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on (free when asked; bind soon)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def silent_server() -> Iterator[int]:
    """A loopback TCP server that accepts connections, reads, and never answers; yields its port.

    For timeouts: a client waiting on it sees a connection that stays open without a response.
    """
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)

    thread = threading.Thread(target=accept, name="silent-server", daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        server.close()


class Relay:
    """A loopback TCP relay to ``target_port`` that can be taken down and brought back: while
    ``down`` it closes every new connection at once (a service that is down), else it forwards bytes
    both ways. Its ``port`` stays the same, so a client configured with it sees the service come back.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.down = False
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(128)
        self._server.settimeout(0.1)
        self.port = int(self._server.getsockname()[1])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="relay", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                continue
            if self.down:
                conn.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                conn.close()
                continue
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                src.settimeout(None)
                data = src.recv(65536)
                if not data or self.down:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._server.close()
