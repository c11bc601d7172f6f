"""Write a trained model's artifact as a new version, then register it (:mod:`aisle.recs.registry`).

The artifact (what the model type's row saves: ``model.npz`` or parquet tables, plus ``params.json``)
is written completely under ``models/artifacts/<model_id>/v<n>/`` before the registry entry is written,
so a reader that finds a record always finds its artifact.
"""

from __future__ import annotations

from typing import Any

from aisle.core.storage import BlobStore
from aisle.recs.model_types import default_model_id, row_of
from aisle.recs.models.base import ModelType
from aisle.recs.registry import ArtifactWriter, ModelRecord, ModelRegistry


def save_model(
    scope: BlobStore,
    tenant: str,
    model: Any,
    *,
    model_id: str | None = None,
    metrics: dict[str, float] | None = None,
    info: dict[str, Any] | None = None,
) -> ModelRecord:
    """Write ``model``'s artifact as a new version, then register it. Returns the record.

    ``model`` is a trained recommender (its ``model_type`` picks the row that saves it); ``model_id``
    defaults to the type in kebab case; ``info`` (data source, fingerprints) is stored in
    ``record.params`` beside the hyper-parameters.
    """
    model_type: ModelType = model.model_type
    row = row_of(model_type)
    model_id = model_id or default_model_id(model_type)
    registry = ModelRegistry(scope)
    version = registry.next_version(model_id)
    writer = ArtifactWriter(scope, model_id, version)
    row.save(writer, model)
    params = model.params_dict()
    writer.put_json("params.json", params)
    record = ModelRecord(
        model_id=model_id,
        tenant=tenant,
        model_type=model_type,
        page_types=list(row.page_types),
        version=version,
        metrics=metrics or {},
        artifact_uri=writer.uri,
        params=params | {"info": info or {}},
    )
    registry.register(record)
    return record
