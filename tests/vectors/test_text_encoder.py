"""The text encoder's integer-arithmetic model: derived once from the shipped file, kept, close to it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from aisle.vectors import text_encoder
from aisle.vectors.text_encoder import TextEncoder, model_files, model_path

TEXTS = [
    "Puma Men Printed Navy Blue Tshirts",
    "MOEN Vero single handle bathroom faucet in brushed nickel",
    "cordless drill",
    "Nike Women Black Running Shoes Footwear Shoes Sports Shoes",
    "12 in. x 12 in. ceramic floor tile",
]


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_path(tmp_path_factory.mktemp("models"))


def test_the_derived_model_multiplies_in_integers(derived: Path) -> None:
    ops = {n.op_type for n in onnx.load(str(derived)).graph.node}
    shipped = {n.op_type for n in onnx.load(str(model_files()[0])).graph.node}
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" in ops
    assert "MatMulInteger" not in shipped  # what the derivation is for


def test_it_is_derived_once_and_named_by_its_source(derived: Path) -> None:
    assert derived.name == text_encoder.derived_name()
    stamp = derived.stat().st_mtime_ns
    assert model_path(derived.parent) == derived
    assert derived.stat().st_mtime_ns == stamp  # found, not written again
    assert [p.name for p in derived.parent.iterdir()] == [derived.name]  # no temporary file left


def test_its_vectors_stay_close_to_the_shipped_models(derived: Path) -> None:
    import onnxruntime as ort

    fast = TextEncoder.load(threads=1, models_dir=derived.parent)
    session = ort.InferenceSession(str(model_files()[0]), providers=["CPUExecutionProvider"])
    shipped = TextEncoder(session, fast._tokenizer)
    a, b = fast.encode(TEXTS), shipped.encode(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.97, cosines  # measured: 0.975-0.999 over Home Depot's 54,667 titles
    # each text is still nearest to its own shipped vector
    assert (np.argmax(a @ b.T, axis=1) == np.arange(len(TEXTS))).all()


def test_a_directory_that_cannot_be_made_falls_back_to_the_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(text_encoder.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    path = model_path(blocker / "models")
    assert path == tmp_path / "tmp" / "aisle-models" / text_encoder.derived_name() and path.is_file()


def test_sessions_side_by_side_embed_as_one_does(derived: Path) -> None:
    two = TextEncoder.load(threads=2, models_dir=derived.parent)
    one = TextEncoder.load(threads=1, models_dir=derived.parent)
    texts = TEXTS * 20  # 100 texts: four batches, run on both sessions at once
    assert np.allclose(two.encode(texts), one.encode(texts), atol=1e-6)
    ids = np.arange(1000, 1300)
    assert np.allclose(two.single_token_states(ids), one.single_token_states(ids), atol=1e-6)
