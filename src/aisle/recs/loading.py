"""Load a registered model's artifact into a ready-to-serve :class:`Recommender`."""

from __future__ import annotations

from aisle.catalog.store import Catalog
from aisle.core.storage import BlobStore
from aisle.recs.model_types import row_of
from aisle.recs.models.base import Recommender
from aisle.recs.registry import ArtifactReader, ModelRecord


def load_recommender(scope: BlobStore, record: ModelRecord, *, catalog: Catalog | None = None) -> Recommender:
    """The model of ``record`` from the tenant scope ``scope``, read by its model type's row
    (:data:`aisle.recs.model_types.MODEL_TYPES`).

    ``catalog`` is accepted for models that could use the current catalog; the artifacts are
    self-contained, so it is not needed today.

    Raises:
        ModelNotFound: an artifact file is missing.
        ValueError: the record's type has no row.
    """
    reader = ArtifactReader(scope, record.artifact_uri)
    return row_of(record.model_type).load(reader, reader.get_json("params.json"))
