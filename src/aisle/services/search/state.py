"""What the search service's routes reach through dependencies: the engine and the predict client.

The dependencies are ``async`` on purpose: they only read ``request.app.state``, and an async dependency
runs inline where a plain ``def`` one is handed to the thread pool (one more hop per request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import httpx
from fastapi import Depends, Request

from aisle.core.config import Settings
from aisle.search.engine import SearchEngine


@dataclass
class SearchState:
    """Resources of one search-service process (``request.app.state.search``)."""

    settings: Settings
    engine: SearchEngine
    predict_client: httpx.AsyncClient


async def _state(request: Request) -> SearchState:
    return request.app.state.search


async def _engine(request: Request) -> SearchEngine:
    return request.app.state.search.engine


State = Annotated[SearchState, Depends(_state)]
Engine = Annotated[SearchEngine, Depends(_engine)]
