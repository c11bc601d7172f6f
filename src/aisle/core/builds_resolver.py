"""Choose the build board's backend: the one place that knows both."""

from __future__ import annotations

from aisle.core.builds import BuildBoard, FileBuildBoard
from aisle.core.config import Settings


def open_build_board(settings: Settings) -> BuildBoard:
    """The board of these settings: Redis when ``AISLE_REDIS_URL`` is set (shared by every replica),
    else the files under ``<AISLE_DATA_DIR>/builds`` (one machine)."""
    if settings.redis_url:
        from aisle.core.builds_redis import RedisBuildBoard

        return RedisBuildBoard(settings.redis_url)
    return FileBuildBoard(settings.data_dir)
