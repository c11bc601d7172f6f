"""EventStore embedded in one SQLite file (WAL mode), shared by every process on the machine.

The predict and edit services run as separate processes; a Python dict could not carry an event
from one to the other, a WAL-mode SQLite file can (readers never block the writer, and a committed
write is visible to the next read of any process). Default path: ``<data_dir>/events.sqlite3``.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from aisle.core.events.store import DEFAULT_CAP, DEFAULT_TTL_S, Event

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    visitor TEXT NOT NULL,
    received REAL NOT NULL,
    payload BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS events_visitor ON events (tenant, visitor, seq);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    payload BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_tenant ON outbox (tenant, seq);
CREATE TABLE IF NOT EXISTS user_features (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
"""


class SqliteEventStore:
    """:class:`~aisle.core.events.store.EventStore` in a WAL-mode SQLite file.

    One connection per thread; writes are short transactions. Events older than ``ttl_s`` seconds
    (by receipt time) are invisible and deleted lazily when their visitor is written again.

    Args:
        path: the database file (its directory is created).
        cap: events kept per visitor.
        ttl_s: seconds an event stays visible after it was received.
        clock: wall-clock seconds since the epoch, the receipt time (tests step it instead of sleeping).
    """

    def __init__(
        self,
        path: Path,
        *,
        cap: int = DEFAULT_CAP,
        ttl_s: int = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.cap = cap
        self.ttl_s = ttl_s
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        conn = self._conn()
        conn.executescript(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=10000")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def append(self, tenant: str, events: Sequence[Event], *, outbox: Sequence[Event] = ()) -> int:
        if not events and not outbox:
            return 0
        now = self.clock()
        conn = self._conn()
        visitors = {e.visitor_id for e in events}
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT INTO events (tenant, visitor, received, payload) VALUES (?, ?, ?, ?)",
                [(tenant, e.visitor_id, now, e.to_json()) for e in events],
            )
            conn.executemany(
                "INSERT INTO outbox (tenant, payload) VALUES (?, ?)", [(tenant, e.to_json()) for e in outbox]
            )
            for visitor in visitors:
                # keep the newest `cap` rows of this visitor and drop expired ones
                conn.execute(
                    "DELETE FROM events WHERE tenant = ? AND visitor = ? AND (received < ? OR seq <= "
                    "(SELECT seq FROM events WHERE tenant = ? AND visitor = ? "
                    "ORDER BY seq DESC LIMIT 1 OFFSET ?))",
                    (tenant, visitor, now - self.ttl_s, tenant, visitor, self.cap),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(events)

    def recent(self, tenant: str, visitor_id: str, limit: int | None = None) -> list[Event]:
        n = self.cap if limit is None else max(0, min(limit, self.cap))
        if n == 0:
            return []
        rows = self._conn().execute(
            "SELECT payload FROM events WHERE tenant = ? AND visitor = ? AND received >= ? "
            "ORDER BY seq DESC LIMIT ?",
            (tenant, visitor_id, self.clock() - self.ttl_s, n),
        )
        return [Event.from_json(r[0]) for r in rows]

    def outbox(self, tenant: str, limit: int) -> list[tuple[str, Event]]:
        rows = self._conn().execute(
            "SELECT seq, payload FROM outbox WHERE tenant = ? ORDER BY seq LIMIT ?", (tenant, limit)
        )
        return [(str(seq), Event.from_json(payload)) for seq, payload in rows]

    def outbox_tenants(self) -> list[str]:
        return [row[0] for row in self._conn().execute("SELECT DISTINCT tenant FROM outbox ORDER BY tenant")]

    def outbox_done(self, tenant: str, entry_ids: Sequence[str]) -> None:
        ids = [(tenant, int(i)) for i in entry_ids if i.isdigit()]
        if ids:
            self._conn().executemany("DELETE FROM outbox WHERE tenant = ? AND seq = ?", ids)

    def put_user_features(self, tenant: str, user_id: str, features: dict[str, Any]) -> None:
        self._conn().execute(
            "INSERT INTO user_features (tenant, user_id, payload) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant, user_id) DO UPDATE SET payload = excluded.payload",
            (tenant, user_id, orjson.dumps(features)),
        )

    def user_features(self, tenant: str, user_id: str) -> dict[str, Any] | None:
        row = (
            self._conn()
            .execute("SELECT payload FROM user_features WHERE tenant = ? AND user_id = ?", (tenant, user_id))
            .fetchone()
        )
        return None if row is None else orjson.loads(row[0])

    def clear(self, tenant: str) -> None:
        conn = self._conn()
        conn.execute("DELETE FROM events WHERE tenant = ?", (tenant,))
        conn.execute("DELETE FROM outbox WHERE tenant = ?", (tenant,))
        conn.execute("DELETE FROM user_features WHERE tenant = ?", (tenant,))

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
