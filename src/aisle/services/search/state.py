"""What the search service's routes reach through dependencies: the engine and the predict client."""

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


def _state(request: Request) -> SearchState:
    return request.app.state.search


def _engine(request: Request) -> SearchEngine:
    return request.app.state.search.engine


State = Annotated[SearchState, Depends(_state)]
Engine = Annotated[SearchEngine, Depends(_engine)]
