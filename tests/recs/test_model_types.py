"""The model-type table: a row per ModelType, whose named trainers and Spark counters exist, and
serving that loads models through it without loading training code or pyspark."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from aisle.recs.model_types import MODEL_TYPES, DataSource, row_of
from aisle.recs.models.base import ModelType

SRC = Path(__file__).resolve().parents[2] / "src"


def _defines(path: str) -> bool:
    """Whether ``"module:function"`` names a top-level function, read from the source (not imported:
    a Spark module needs pyspark)."""
    module, _, name = path.partition(":")
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"{module} not found"
    tree = ast.parse(Path(spec.origin).read_text())
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def test_every_model_type_has_one_row() -> None:
    assert set(MODEL_TYPES) == set(ModelType)
    assert all(row.model_type is t for t, row in MODEL_TYPES.items())
    with pytest.raises(ValueError):
        row_of("NOT_A_TYPE")  # type: ignore[arg-type]


@pytest.mark.parametrize("model_type", list(ModelType))
def test_each_rows_trainer_and_spark_counter_exist(model_type: ModelType) -> None:
    row = MODEL_TYPES[model_type]
    assert _defines(row.train), row.train
    assert callable(row.trainer())
    if row.spark is not None:
        assert row.spark.startswith("aisle.recs.spark.") and _defines(row.spark), row.spark
    # what a row learns from matches where its data comes from
    assert (row.data is DataSource.CATALOG) == (row.learns_from == ())


def test_demo_placements_are_unique_and_only_one_type_serves_bundles() -> None:
    placements = [(r.demo.tenant, r.demo.container_id) for r in MODEL_TYPES.values() if r.demo is not None]
    assert len(placements) == len(set(placements)) == len(ModelType)
    assert [t for t, r in MODEL_TYPES.items() if r.bundles] == [ModelType.BUNDLE_RECOMMENDATIONS]


def test_services_load_neither_training_code_nor_pyspark() -> None:
    code = (
        "import sys\n"
        "import aisle.services.predict.app, aisle.services.edit.app, aisle.services.search.app\n"
        "import aisle.recs.loading\n"
        "print(sorted(m for m in sys.modules if m.startswith(('aisle.recs.training', "
        "'aisle.recs.evaluation', 'aisle.recs.spark', 'pyspark'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": str(SRC)}
    )
    assert out.stdout.strip() == "[]"
