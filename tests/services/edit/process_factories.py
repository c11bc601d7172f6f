"""Uvicorn factories for the multi-process test: the predict app with a small co-occurrence model.

Started as ``uvicorn --app-dir tests/services/edit --factory process_factories:predict_app`` with the
repository on ``PYTHONPATH`` (for ``tests.support``); settings come from the ``AISLE_*`` environment
like the real factory.
"""

from __future__ import annotations

from fastapi import FastAPI
from tests.support.recs import CooccurrenceRecommender

from aisle.core.config import load_settings
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

SESSIONS = [["p0", "p1"], ["p0", "p1"], ["p0", "p2"], ["p0", "p3"]]


def predict_app() -> FastAPI:
    model = CooccurrenceRecommender(SESSIONS)
    return create_app(load_settings(), models=RegistryModelSource(lambda scope, record: model))
