"""Training of recommendation models, apart from serving: build a model from data, write its artifact,
register it. Every ``train_*`` function returns a model; :func:`save_model` writes it and returns the
new :class:`~aisle.recs.registry.ModelRecord`.

* ``trainers``: one embedded trainer per model type (numpy / scipy / polars in this process), named by
  the model-type table (:mod:`aisle.recs.model_types`);
* ``artifacts``: :func:`save_model`, the artifact then the registry record;
* ``sources``: each data source's training data and fingerprint (``aisle train``, the demo build);
* the Spark counting of the same models lives in :mod:`aisle.recs.spark` (only the command line
  imports it).
"""

from aisle.recs.model_types import default_model_id
from aisle.recs.training.artifacts import save_model
from aisle.recs.training.trainers import (
    train_also_view,
    train_bundle_model,
    train_fbt,
    train_gbb,
    train_similar,
    vector_search_embeddings,
)

__all__ = [
    "default_model_id",
    "save_model",
    "train_also_view",
    "train_bundle_model",
    "train_fbt",
    "train_gbb",
    "train_similar",
    "vector_search_embeddings",
]
