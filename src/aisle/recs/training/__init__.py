"""Training of recommendation models, apart from serving: build a model from data, write its artifact,
register it. Every ``train_*`` function returns a model; :func:`save_model` writes it and returns the
new :class:`~aisle.recs.registry.ModelRecord`.

* ``trainers``: one embedded trainer per model type (numpy / scipy / polars in this process);
* the Spark counting of the same models lives in :mod:`aisle.recs.spark` (only the command line
  imports it).
"""

from aisle.recs.training.trainers import (
    default_model_id,
    save_model,
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
