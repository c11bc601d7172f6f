"""The per-tenant model registry and its versioned, immutable artifacts in object storage.

Layout in the tenant's scope::

    models/artifacts/<model_id>/v<version>/<file>   immutable, written completely first
    models/registry/<model_id>.json                 one ModelRecord, written last

A record is written only after every artifact file of its version exists, so a reader that finds a
record always finds its artifact. A new training run of the same model id writes ``v<version+1>``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import numpy as np
import orjson
from pydantic import BaseModel, Field

from aisle.core.errors import Conflict, ErrorCode, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.validation import ResourceId, is_resource_id
from aisle.recs.models.base import ModelType

REGISTRY_DIR = "models/registry"
ARTIFACT_DIR = "models/artifacts"


class ModelNotFound(NotFound):
    code = ErrorCode.MODEL_NOT_FOUND


class ModelRecord(BaseModel):
    """One trained model of a tenant. ``artifact_uri`` is the artifact folder in the tenant scope."""

    model_id: ResourceId
    tenant: str
    model_type: ModelType
    page_types: list[str] = Field(default_factory=list)
    status: str = "trained"
    version: int = 1
    metrics: dict[str, float] = Field(default_factory=dict)
    artifact_uri: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    params: dict[str, Any] = Field(default_factory=dict)


def artifact_dir(model_id: str, version: int) -> str:
    """The artifact folder (relative to the tenant scope) of one model version."""
    return f"{ARTIFACT_DIR}/{model_id}/v{version}"


class ModelRegistry:
    """Reads and writes the model records of one tenant (``scope`` is the tenant-scoped store)."""

    def __init__(self, scope: BlobStore) -> None:
        self.scope = scope

    def list(self) -> list[ModelRecord]:
        """Every model of the tenant, oldest first."""
        records = []
        for path in self.scope.list(REGISTRY_DIR + "/"):
            if path.endswith(".json"):
                try:
                    records.append(ModelRecord.model_validate_json(self.scope.get(path)))
                except BlobNotFound:  # deleted between list and get
                    continue
        return sorted(records, key=lambda r: (r.created_at, r.model_id))

    def get(self, model_id: str) -> ModelRecord:
        """The record of ``model_id``. Raises :class:`ModelNotFound` (also for an id no model can have)."""
        try:
            if not is_resource_id(model_id):
                raise BlobNotFound(model_id)
            raw = self.scope.get(f"{REGISTRY_DIR}/{model_id}.json")
        except BlobNotFound as exc:
            raise ModelNotFound(f"model '{model_id}' does not exist", details={"model_id": model_id}) from exc
        return ModelRecord.model_validate_json(raw)

    def register(self, record: ModelRecord) -> None:
        """Write (or replace) the record.

        Raises:
            Conflict: the record's artifact folder holds no files (artifacts go first).
        """
        if not any(True for _ in self.scope.list(record.artifact_uri.rstrip("/") + "/")):
            raise Conflict(
                f"artifact '{record.artifact_uri}' of model '{record.model_id}' is missing: write it first",
                code=ErrorCode.MODEL_ARTIFACT_MISSING,
            )
        self.scope.put(f"{REGISTRY_DIR}/{record.model_id}.json", record.model_dump_json(indent=2).encode())

    def next_version(self, model_id: str) -> int:
        """One past the highest artifact version of ``model_id`` in storage (1 for a new model)."""
        dirs: Iterable[str] = self.scope.list_dirs(f"{ARTIFACT_DIR}/{model_id}")
        versions = [int(d[1:]) for d in dirs if d[:1] == "v" and d[1:].isdigit()]
        return max(versions, default=0) + 1


class ArtifactWriter:
    """Writes the files of one new artifact version; they never change afterwards."""

    def __init__(self, scope: BlobStore, model_id: str, version: int) -> None:
        self.scope = scope
        self.uri = artifact_dir(model_id, version)

    def put_bytes(self, name: str, data: bytes) -> None:
        if not self.scope.put_if_absent(f"{self.uri}/{name}", data):
            raise Conflict(
                f"artifact file {self.uri}/{name} already exists", code=ErrorCode.MODEL_ARTIFACT_EXISTS
            )

    def put_arrays(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        """Store numpy arrays as one ``.npz`` file (no pickles: object arrays are refused)."""
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        self.put_bytes(name, buf.getvalue())

    def put_json(self, name: str, value: Any) -> None:
        self.put_bytes(name, orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY))


class ArtifactReader:
    """Reads the files of one artifact version (``uri`` from :attr:`ModelRecord.artifact_uri`)."""

    def __init__(self, scope: BlobStore, uri: str) -> None:
        self.scope = scope
        self.uri = uri.rstrip("/")

    def get_bytes(self, name: str) -> bytes:
        try:
            return self.scope.get(f"{self.uri}/{name}")
        except BlobNotFound as exc:
            raise ModelNotFound(f"artifact file {self.uri}/{name} is missing") from exc

    def get_arrays(self, name: str) -> dict[str, np.ndarray]:
        with np.load(io.BytesIO(self.get_bytes(name)), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}

    def get_json(self, name: str) -> Any:
        return orjson.loads(self.get_bytes(name))
