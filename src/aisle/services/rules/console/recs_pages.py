"""Console pages for containers, recommendation rules, models and jobs."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(include_in_schema=False)
