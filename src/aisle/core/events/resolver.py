"""Choose an EventStore backend: the one place that knows every backend."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from aisle.core.config import Settings
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.events.store import DEFAULT_CAP, DEFAULT_TTL_S, EventStore

SQLITE_FILE = "events.sqlite3"


def open_event_store_url(url: str, *, cap: int = DEFAULT_CAP, ttl_s: int = DEFAULT_TTL_S) -> EventStore:
    """Open the store named by ``url``: ``redis://host:port/db`` or ``sqlite:///abs/path.sqlite3``.

    Raises:
        BadRequest: an unsupported scheme (code ``event_store_url_invalid``).
    """
    scheme = urlparse(url).scheme
    if scheme in ("redis", "rediss", "unix"):
        from aisle.core.events.store_redis import RedisEventStore

        return RedisEventStore(url, cap=cap, ttl_s=ttl_s)
    if scheme == "sqlite":
        from aisle.core.events.store_sqlite import SqliteEventStore

        return SqliteEventStore(Path(url[len("sqlite://") :]), cap=cap, ttl_s=ttl_s)
    raise BadRequest(f"unsupported event store URL '{url}'", code=ErrorCode.EVENT_STORE_URL_INVALID)


def open_event_store(settings: Settings, *, cap: int = DEFAULT_CAP, ttl_s: int = DEFAULT_TTL_S) -> EventStore:
    """The store of these settings: Redis when ``AISLE_REDIS_URL`` is set, else the embedded
    SQLite file ``<AISLE_DATA_DIR>/events.sqlite3`` that every local process shares."""
    if settings.redis_url:
        return open_event_store_url(settings.redis_url, cap=cap, ttl_s=ttl_s)
    path = Path(settings.data_dir).expanduser().resolve() / SQLITE_FILE
    return open_event_store_url(f"sqlite://{path}", cap=cap, ttl_s=ttl_s)
