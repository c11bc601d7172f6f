"""Containers (recommendation placements) in object storage, versioned with optimistic concurrency.

Layout in the tenant's scope::

    containers/<container_id>/r00000001.json   immutable revisions: {"revision", "deleted", "container"}
    containers/<container_id>/head.json        hint of the latest revision (may lag, never leads)

A write creates revision ``r + 1`` with ``put_if_absent``: of concurrent writers that read revision
``r``, exactly one succeeds and the others get :class:`ContainerVersionConflict` (409), so no update
is lost. A reader takes the hint, then probes forward until a revision is missing. Deleting writes a
tombstone revision; creating the id again restarts the user-visible ``version`` at 1. The mechanism is
:class:`aisle.core.storage.revisions.RevisionLog`, shared with merchandising rules.
"""

from __future__ import annotations

import builtins
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aisle.core.errors import BadRequest, Conflict, ErrorCode, NotFound
from aisle.core.storage import BlobStore
from aisle.core.storage.documents import VersionedDocuments
from aisle.core.storage.revisions import RevisionLog
from aisle.core.validation import ID_PATTERN, ResourceId
from aisle.recs.actions import MAX_ACTIONS, PredictAction
from aisle.recs.diversity import DiversityLevel

ROOT = "containers"


class ContainerNotFound(NotFound):
    code = ErrorCode.CONTAINER_NOT_FOUND

    @classmethod
    def of(cls, container_id: str) -> ContainerNotFound:
        """The error for ``container_id`` (one message for every reader, cached or not)."""
        return cls(f"container '{container_id}' does not exist", details={"containerId": container_id})


class ContainerExists(Conflict):
    code = ErrorCode.CONTAINER_EXISTS


class ContainerVersionConflict(Conflict):
    code = ErrorCode.CONTAINER_VERSION_CONFLICT


class SlotOptions(BaseModel):
    """Model options of one slot; request ``predictParams`` override them."""

    model_config = ConfigDict(extra="forbid")

    diversityLevel: DiversityLevel | None = Field(default=None, description="Default diversity of this slot.")
    strictFiltering: bool | None = Field(default=None, description="Default strictFiltering of this slot.")
    backfillOrder: Literal["popular", "trending", "catalog"] | None = Field(
        default=None,
        description="How a short list is backfilled when the tenant has a popularity artifact: popular "
        "(default: the seeds' categories, then the catalog, most popular first), trending (highest "
        "trending first) or catalog (the seeds' categories in catalog order, as without an artifact).",
    )


class SlotConfig(BaseModel):
    """One model slot of a container."""

    model_config = ConfigDict(extra="forbid")

    slotConfigId: Annotated[str, Field(pattern=ID_PATTERN, description="Unique within the container.")]
    modelId: Annotated[ResourceId, Field(description="A deployed model of the tenant.")]
    placement: Annotated[
        int, Field(ge=0, le=1000, description="Order in which slots fill the response, lowest first.")
    ] = 0
    itemCount: Annotated[int, Field(ge=1, le=100, description="Items this slot contributes.")] = 20
    options: SlotOptions = Field(default_factory=SlotOptions)


class ContainerBody(BaseModel):
    """What a client writes: the slots and descriptive fields."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(max_length=200)] = ""
    description: Annotated[str, Field(max_length=2000)] = ""
    slotConfigurations: Annotated[list[SlotConfig], Field(min_length=1, max_length=20)]
    recommendationRules: Annotated[list[PredictAction], Field(max_length=MAX_ACTIONS)] = Field(
        default_factory=list,
        description="FILTER / BOOST / BURY rules of this placement (authored in the merchandising console). "
        "Predict applies them to every answer of the container, before the request's own `actions` "
        "(together at most 50); versioned with the container. A rule's `slotConfigId` must name one of "
        "its slots.",
    )

    @field_validator("slotConfigurations")
    @classmethod
    def _unique_slots(cls, slots: list[SlotConfig]) -> list[SlotConfig]:
        ids = [s.slotConfigId for s in slots]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"slotConfigId must be unique in a container; repeated: {', '.join(dupes)}")
        return slots

    def check_rule_slots(self) -> None:
        """Raises BadRequest (400 ``value_invalid``) when a recommendation rule names a slot not in here.

        A rule the schema admits: refused by this documented rule as a 400, not a 422."""
        slots = {s.slotConfigId for s in self.slotConfigurations}
        for i, rule in enumerate(self.recommendationRules):
            if rule.slotConfigId is not None and rule.slotConfigId not in slots:
                field = f"recommendationRules.{i}.slotConfigId"
                message = (
                    f"'{rule.slotConfigId}' is not a slot of this container ({', '.join(sorted(slots))})"
                )
                raise BadRequest(
                    f"{field}: {message}",
                    code=ErrorCode.VALUE_INVALID,
                    details=[{"field": f"body.{field}", "message": message}],
                )


class Container(ContainerBody):
    """A stored container: ``version`` is 1 on creation and grows by one on each replace."""

    containerId: str
    version: int
    createdAt: datetime
    updatedAt: datetime

    def model_ids(self) -> list[str]:
        return list(dict.fromkeys(s.modelId for s in self.slotConfigurations))


class ContainerStore(VersionedDocuments[Container]):
    """Create, read, replace and delete the containers of one tenant (``scope``: tenant-scoped store).

    The revisions are a :class:`~aisle.core.storage.revisions.RevisionLog` (``r00000001.json`` files
    holding a ``container`` key); reading and the compare-and-swap are
    :class:`~aisle.core.storage.documents.VersionedDocuments`.
    """

    model = Container

    def __init__(self, scope: BlobStore) -> None:
        super().__init__(RevisionLog(scope, ROOT, prefix="r", body_key="container"))
        self.scope = scope

    def _not_found(self, doc_id: str) -> ContainerNotFound:
        return ContainerNotFound.of(doc_id)

    def _conflict(self, doc_id: str, given: int, current: int | None) -> ContainerVersionConflict:
        return ContainerVersionConflict(
            f"container '{doc_id}' is at version {current}, not {given}: re-read it and retry",
            details={"containerId": doc_id, "givenVersion": given, "currentVersion": current},
        )

    def list(self) -> builtins.list[Container]:
        """Every live container of the tenant, by id."""
        return sorted(self._live(), key=lambda c: c.containerId)

    def create(self, container_id: str, body: ContainerBody) -> Container:
        """Create at version 1. Raises :class:`ContainerExists` (409) when the id is taken."""
        rev, current = self._latest(container_id)
        now = datetime.now(UTC)
        container = Container(
            **body.model_dump(), containerId=container_id, version=1, createdAt=now, updatedAt=now
        )
        if current is not None or not self._write(container_id, rev + 1, container):
            raise ContainerExists(
                f"container '{container_id}' already exists", details={"containerId": container_id}
            )
        return container

    def replace(self, container_id: str, body: ContainerBody, version: int) -> Container:
        """Replace the container whose current version is ``version``; the result has ``version + 1``.

        Raises:
            ContainerNotFound: no such container.
            ContainerVersionConflict: ``version`` is not the current one, or another writer won the race
                (nothing was changed; re-read and retry).
        """
        rev, current = self._current(container_id, version)
        updated = Container(
            **body.model_dump(),
            containerId=container_id,
            version=version + 1,
            createdAt=current.createdAt,
            updatedAt=datetime.now(UTC),
        )
        return self._replace(container_id, rev, updated, version)

    def using_model(self, model_id: str) -> builtins.list[str]:
        """Ids of live containers with a slot bound to ``model_id``."""
        return [c.containerId for c in self.list() if model_id in c.model_ids()]
