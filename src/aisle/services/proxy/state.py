"""What the proxy service's routes reach through dependencies: the external search front door.

The dependency is ``async``: it only reads ``request.app.state`` (inline, no thread-pool hop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from aisle.core.config import Settings
from aisle.search.external.proxy import ExternalSearchProxy


@dataclass
class ProxyState:
    """Resources of one proxy-service process (``request.app.state.proxy``)."""

    settings: Settings
    proxy: ExternalSearchProxy


async def _proxy(request: Request) -> ExternalSearchProxy:
    return request.app.state.proxy.proxy  # type: ignore[no-any-return]


Proxy = Annotated[ExternalSearchProxy, Depends(_proxy)]
"""A route parameter typed ``Proxy`` receives the process's :class:`ExternalSearchProxy`."""
