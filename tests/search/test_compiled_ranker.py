"""A ranker compiled by lleaves scores as LightGBM does (to 1e-6, missing values included), is made
once per host and loaded by the others, and LightGBM scores until it is ready (issue 43)."""

from __future__ import annotations

from pathlib import Path

import lightgbm
import numpy as np
import pytest

from aisle.core.storage import BlobStore
from aisle.search.ranking.compiled import CompiledModel
from aisle.search.ranking.store import RankerRecord, RankerStore


def _model(seed: int = 3) -> tuple[lightgbm.Booster, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3000, 12))
    x[rng.random(x.shape) < 0.1] = np.nan  # missing features, as candidate_features leaves them
    y = (np.nan_to_num(x[:, 0]) + 0.5 * np.nan_to_num(x[:, 3]) > 0).astype(int) + (x[:, 5] > 1).astype(int)
    groups = [30] * 100
    data = lightgbm.Dataset(x, y, group=groups)
    params = {"objective": "lambdarank", "verbosity": -1, "num_leaves": 15, "min_data_in_leaf": 5}
    return lightgbm.train(params, data, num_boost_round=60), x


@pytest.mark.slow  # LLVM compiles for seconds
def test_the_compiled_model_scores_as_lightgbm(tmp_path: Path) -> None:
    booster, x = _model()
    compiled = CompiledModel(booster.model_to_string(), tmp_path)
    predict = compiled.wait()
    assert predict is not None
    rows = x[:500].astype(np.float32)  # the features' dtype in serving
    assert np.allclose(predict(rows), booster.predict(rows, num_threads=1), atol=1e-6, rtol=0)
    # kept for the host: another process's model loads the library instead of compiling
    assert (tmp_path / f"{compiled.digest}.so").exists()
    again = CompiledModel(booster.model_to_string(), tmp_path).wait()
    assert again is not None and np.allclose(again(rows), predict(rows), atol=0, rtol=0)


@pytest.mark.slow  # LLVM compiles for seconds
def test_the_store_serves_lightgbm_until_the_compiled_model_is_ready(
    any_blob_store: BlobStore, tmp_path: Path
) -> None:
    booster, x = _model(5)
    store = RankerStore(any_blob_store, check_every=0, compiled_dir=tmp_path / "rankers")
    record = RankerRecord(version=0, features=[f"f{i}" for i in range(12)], queries=100, candidates=3000)
    saved = store.save("t", booster.model_to_string(), record)
    ranker = store.load("t", saved.version)
    assert ranker.compiled is not None
    first = ranker.score(x[:50])  # LightGBM: the compile has only started
    assert np.allclose(first, booster.predict(x[:50]), atol=0, rtol=0)
    assert ranker.compiled.wait() is not None
    assert np.allclose(ranker.score(x[:50]), first, atol=1e-6, rtol=0)  # now the compiled one


def test_a_failed_compile_leaves_lightgbm_scoring(tmp_path: Path) -> None:
    booster, _ = _model(7)
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    compiled = CompiledModel(booster.model_to_string(), blocked)  # mkdir fails: no compile
    assert compiled.wait() is None and compiled.predictor() is None
