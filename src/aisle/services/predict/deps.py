"""FastAPI dependencies of the predict service: the engine and the token check, read from ``app.state``.

Both are ``async`` on purpose: they only read ``request.app.state.predict``, and an async dependency runs
inline where a plain ``def`` one would be handed to a thread (POST /predict answers warm requests
without one).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from aisle.recs.serving import PredictEngine
from aisle.services.predict.state import PredictState


def predict_state(request: Request) -> PredictState:
    """The process's :class:`PredictState` (set by ``create_app``)."""
    state: PredictState = request.app.state.predict
    return state


async def predict_engine(request: Request) -> PredictEngine:
    return predict_state(request).engine


Engine = Annotated[PredictEngine, Depends(predict_engine)]
"""The process's :class:`PredictEngine`, as a route parameter."""
