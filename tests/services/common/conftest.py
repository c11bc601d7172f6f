"""The search and predict services over the small tenant ``shop`` (tests.support.recs.small_tenant)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.recs import CooccurrenceRecommender, small_tenant

from aisle.core.config import Settings

SESSIONS = [["p0", "p1"], ["p0", "p2"], ["p1", "p3"]]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Auth off, a bucket with tenant ``shop`` (8 products, deployed model ``m1``, container ``c1``)."""
    return small_tenant(tmp_path)


def predict_app(settings: Settings) -> object:
    from aisle.recs.serving import RegistryModelSource
    from aisle.services.predict.app import create_app

    model = CooccurrenceRecommender(SESSIONS)
    return create_app(settings, models=RegistryModelSource(lambda scope, record: model))


def search_app(settings: Settings) -> object:
    from aisle.services.search.app import create_app

    return create_app(settings.model_copy(update={"predict_url": "http://127.0.0.1:9"}), preload=False)
