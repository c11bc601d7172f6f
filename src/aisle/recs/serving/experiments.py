"""Experiments on recommendations: the visitor's variant of a container, applied by the predict engine.

A running experiment of surface ``recommendations`` assigns each visitor (``visitorId``; none: the
control, untagged) a variant, through the one interface search serves variants through too
(:func:`~aisle.experiments.running.visitor_variants`); a variant's
:class:`~aisle.experiments.model.ContainerChange` for the container asked replaces the models of the
slots it names (by 0-based position) and drops the container's saved rules it names (by 0-based
position as a string, ``"*"`` for all). A slot position the container does not have is ignored, so a
container edited under a running experiment still answers. Experiments come from
:class:`~aisle.experiments.store.LiveExperiments`, which a change reaches on the next request.
:class:`ContainerPromotion` is recs' part of the experiments admin
(:class:`~aisle.experiments.admin.ExperimentAdmin`).
"""

from __future__ import annotations

from collections.abc import Callable

from aisle.core.storage import BlobStore
from aisle.experiments.admin import Refusal
from aisle.experiments.model import Changes, ContainerChange
from aisle.experiments.running import RunningExperiments, visitor_variants
from aisle.recs.containers import Container, ContainerBody, ContainerStore


def apply_change(container: Container, change: ContainerChange) -> Container:
    """``container`` with the variant's slot models and without the saved rules it switches off."""
    slots = [
        s.model_copy(update={"modelId": change.slots[str(i)]}) if str(i) in change.slots else s
        for i, s in enumerate(container.slotConfigurations)
    ]
    off = set(change.rulesOff)
    rules = (
        [] if "*" in off else [r for i, r in enumerate(container.recommendationRules) if str(i) not in off]
    )
    return container.model_copy(update={"slotConfigurations": slots, "recommendationRules": rules})


def container_arm(
    live: RunningExperiments, tenant: str, container: Container, visitor_id: str | None
) -> tuple[Container, list[tuple[str, str]]]:
    """The container as the visitor's variants change it, and the ``(experimentId, variantId)`` pairs
    served (empty without a visitor or a running recommendations experiment)."""
    served = []
    for experiment, variant in visitor_variants(live, tenant, visitor_id, "recommendations"):
        served.append((experiment.id, variant.id))
        change = variant.changes.containers.get(container.containerId)
        if change is not None:
            container = apply_change(container, change)
    return container, served


class ContainerPromotion:
    """The recommendations surface's :class:`~aisle.experiments.admin.Promotion`: a variant's container
    changes are made live by replacing each container named by itself with the change applied (a new
    container version, optimistic concurrency as any edit). Container changes are not checked on
    save: a slot position a container lacks is ignored when served, and promoting a change to a
    container that no longer exists answers 404.

    Args:
        scope: the tenant's scoped store, per tenant (``Tenants.scope``).
    """

    def __init__(self, scope: Callable[[str], BlobStore]) -> None:
        self.scope = scope

    def check(self, tenant: str, changes: Changes) -> Refusal | None:
        """Always None: container changes are checked when served (see the class docstring)."""
        return None

    def apply(self, tenant: str, changes: Changes) -> None:
        """Replace each container ``changes.containers`` names. Raises ContainerNotFound (404),
        ContainerVersionConflict (409: edited meanwhile, retry)."""
        if not changes.containers:
            return
        store = ContainerStore(self.scope(tenant))
        for container_id, change in changes.containers.items():
            current = store.get(container_id)
            changed = apply_change(current, change)
            body = ContainerBody.model_validate(changed.model_dump(include=set(ContainerBody.model_fields)))
            store.replace(container_id, body, current.version)
