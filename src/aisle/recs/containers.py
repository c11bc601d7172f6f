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
from typing import Annotated, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aisle.core.errors import Conflict, NotFound
from aisle.core.storage import BlobStore
from aisle.core.storage.revisions import RevisionLog
from aisle.recs.diversity import DiversityLevel

ROOT = "containers"
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"


class ContainerNotFound(NotFound):
    code = "container_not_found"

    @classmethod
    def of(cls, container_id: str) -> ContainerNotFound:
        """The error for ``container_id`` (one message for every reader, cached or not)."""
        return cls(f"container '{container_id}' does not exist", details={"containerId": container_id})


class ContainerExists(Conflict):
    code = "container_exists"


class ContainerVersionConflict(Conflict):
    code = "container_version_conflict"


class SlotOptions(BaseModel):
    """Model options of one slot; request ``predictParams`` override them."""

    model_config = ConfigDict(extra="forbid")

    diversityLevel: DiversityLevel | None = Field(default=None, description="Default diversity of this slot.")
    strictFiltering: bool | None = Field(default=None, description="Default strictFiltering of this slot.")


class SlotConfig(BaseModel):
    """One model slot of a container."""

    model_config = ConfigDict(extra="forbid")

    slotConfigId: Annotated[str, Field(pattern=ID_PATTERN, description="Unique within the container.")]
    modelId: Annotated[
        str, Field(min_length=1, max_length=200, description="A deployed model of the tenant.")
    ]
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

    @field_validator("slotConfigurations")
    @classmethod
    def _unique_slots(cls, slots: list[SlotConfig]) -> list[SlotConfig]:
        ids = [s.slotConfigId for s in slots]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"slotConfigId must be unique in a container; repeated: {', '.join(dupes)}")
        return slots


class Container(ContainerBody):
    """A stored container: ``version`` is 1 on creation and grows by one on each replace."""

    containerId: str
    version: int
    createdAt: datetime
    updatedAt: datetime

    def model_ids(self) -> list[str]:
        return list(dict.fromkeys(s.modelId for s in self.slotConfigurations))


class ContainerStore:
    """Create, read, replace and delete the containers of one tenant (``scope``: tenant-scoped store).

    The revisions are a :class:`~aisle.core.storage.revisions.RevisionLog` (``r00000001.json`` files
    holding a ``container`` key); validated containers are cached per revision on top of it, because
    the predict service reads the head on every request.
    """

    def __init__(self, scope: BlobStore) -> None:
        self.scope = scope
        self.log = RevisionLog(scope, ROOT, prefix="r", body_key="container")
        self._cache: dict[tuple[str, int], Container | None] = {}

    def _latest(self, cid: str) -> tuple[int, Container | None]:
        """(latest revision, its container or None when deleted); (0, None) for a never-created id."""
        rev, body = self.log.latest(cid)
        if rev == 0:
            return 0, None
        key = (cid, rev)
        if key not in self._cache:
            if len(self._cache) > 1024:
                self._cache.clear()
            self._cache[key] = None if body is None else Container.model_validate(body)
        return rev, self._cache[key]

    def _write(self, cid: str, rev: int, container: Container | None) -> bool:
        return self.log.write(cid, rev, None if container is None else container.model_dump(mode="json"))

    def find(self, container_id: str) -> Container | None:
        """The current container, or None when the id was never created or is deleted."""
        return self._latest(container_id)[1]

    def get(self, container_id: str) -> Container:
        """The current container. Raises :class:`ContainerNotFound`."""
        container = self.find(container_id)
        if container is None:
            raise ContainerNotFound.of(container_id)
        return container

    def list(self) -> list[Container]:
        """Every live container of the tenant, by id."""
        out: builtins.list[Container] = []
        # cast: RevisionLog.names is annotated ``list[str]`` inside a class whose ``list`` is a method
        for cid in cast("builtins.list[str]", self.log.names()):
            _, container = self._latest(cid)
            if container is not None:
                out.append(container)
        return sorted(out, key=lambda c: c.containerId)

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
        rev, current = self._latest(container_id)
        if current is None:
            raise ContainerNotFound.of(container_id)
        if current.version != version:
            raise self._conflict(container_id, version, current.version)
        updated = Container(
            **body.model_dump(),
            containerId=container_id,
            version=version + 1,
            createdAt=current.createdAt,
            updatedAt=datetime.now(UTC),
        )
        if not self._write(container_id, rev + 1, updated):
            _, now_current = self._latest(container_id)
            raise self._conflict(container_id, version, now_current.version if now_current else None)
        return updated

    def delete(self, container_id: str, version: int | None = None) -> None:
        """Delete (optionally only at ``version``). Raises ContainerNotFound / ContainerVersionConflict."""
        rev, current = self._latest(container_id)
        if current is None:
            raise ContainerNotFound.of(container_id)
        if version is not None and current.version != version:
            raise self._conflict(container_id, version, current.version)
        if not self._write(container_id, rev + 1, None):
            raise self._conflict(container_id, current.version, None)

    def using_model(self, model_id: str) -> builtins.list[str]:
        """Ids of live containers with a slot bound to ``model_id``."""
        return [c.containerId for c in self.list() if model_id in c.model_ids()]

    @staticmethod
    def _conflict(cid: str, given: int, current: int | None) -> ContainerVersionConflict:
        return ContainerVersionConflict(
            f"container '{cid}' is at version {current}, not {given}: re-read it and retry",
            details={"containerId": cid, "givenVersion": given, "currentVersion": current},
        )
