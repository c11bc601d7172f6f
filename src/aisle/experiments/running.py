"""Running experiments per request: the one interface search and recs both serve variants through.

A serving process asks, for each request, which variant the visitor gets in each running experiment
of its surface (:func:`visitor_variants`). Where the running experiments come from is a
:class:`RunningExperiments`: :class:`~aisle.experiments.store.LiveExperiments` over the bucket (a
started or stopped experiment is served from the next request), or a fixed set (the demo's
simulation, tests). Search turns the variants into an arm (:class:`~aisle.search.experiments.SearchArms`),
recs into a container (:func:`~aisle.recs.serving.experiments.container_arm`).
"""

from __future__ import annotations

from typing import Protocol

from aisle.experiments.assignment import assign
from aisle.experiments.model import Experiment, Surface, Variant


class RunningExperiments(Protocol):
    """Where a serving process finds a tenant's running experiments."""

    def running(self, tenant: str) -> tuple[Experiment, ...]:
        """The tenant's running experiments, oldest first (both surfaces)."""
        ...


def visitor_variants(
    live: RunningExperiments, tenant: str, visitor_id: str | None, surface: Surface
) -> list[tuple[Experiment, Variant]]:
    """The variant ``visitor_id`` gets in each running experiment of ``surface``, oldest experiment
    first (:func:`~aisle.experiments.assignment.assign`).

    Returns an empty list without a visitor id: the visitor gets the control and the request is not
    tagged, so it is not counted in any experiment.
    """
    if not visitor_id:
        return []
    return [(e, assign(e, visitor_id)) for e in live.running(tenant) if e.surface == surface]
