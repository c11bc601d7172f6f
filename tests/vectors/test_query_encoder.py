"""The static query encoder: built with the text vectors, close to MiniLM, used by the hybrid stage."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from tests.support.vectors import MiniTenant, mini_fashion

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.vectors import query_encoder
from aisle.vectors.query_encoder import QUERY_TOKENS, StaticQueryEncoder, cached_token_vectors
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore
from aisle.vectors.table import VectorTable, latest_table
from aisle.vectors.text_encoder import TextEncoder

QUERIES = ["blue denim jeans", "black watch for men", "red dress", "running shoes", "leather handbag"]


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> MiniTenant:
    return mini_fashion(tmp_path_factory.getbasetemp() / "query-encoder-mini", shared_data, images=False)


@pytest.fixture(scope="module")
def table(mini: MiniTenant) -> VectorTable:
    path = latest_table(mini.data_dir, "fashion", "text")
    assert path is not None
    return VectorTable.load(path)


@pytest.fixture(scope="module")
def minilm() -> TextEncoder:
    return TextEncoder.load(threads=1)


def test_the_build_fits_a_query_encoder_into_the_table(table: VectorTable, minilm: TextEncoder) -> None:
    assert (table.path / QUERY_TOKENS).is_file()
    assert table.query is not None
    tokens = np.load(table.path / QUERY_TOKENS, mmap_mode="r")
    assert tokens.dtype == np.float16 and tokens.shape == (minilm.vocabulary_size, 384)
    for q in QUERIES:
        v = table.query.encode(q)
        assert v.dtype == np.float32 and v.shape == (384,)
        assert float(np.linalg.norm(v)) == pytest.approx(1.0, abs=1e-5)
        assert np.array_equal(v, table.query.encode(q))  # deterministic
    assert float(np.linalg.norm(table.query.encode(""))) == pytest.approx(1.0, abs=1e-5)  # [UNK], not NaN


def test_on_a_small_catalog_the_fit_stays_close_to_minilm(
    table: VectorTable, minilm: TextEncoder, mini: MiniTenant
) -> None:
    """120 products cannot teach a 384 x 384 map much: shrunk towards the identity, it must not lose
    what the unmapped table has (unshrunk, it fell to a mean cosine of 0.56 here)."""
    assert table.query is not None
    unmapped = StaticQueryEncoder(cached_token_vectors(mini.data_dir, lambda: minilm))
    full = minilm.encode(QUERIES)
    fitted = np.mean([table.query.encode(q) @ f for q, f in zip(QUERIES, full, strict=True)])
    raw = np.mean([unmapped.encode(q) @ f for q, f in zip(QUERIES, full, strict=True)])
    assert fitted > raw - 0.02 and fitted > 0.7


def test_the_fit_recovers_a_linear_map_and_folds_it_into_the_table() -> None:
    """Targets made by a known rotation of the static vectors: the fitted encoder must reproduce the
    rotation on texts it was not fitted on."""
    rng = np.random.default_rng(7)
    base = rng.normal(size=(30_522, 384)).astype(np.float32)
    rotation, _ = np.linalg.qr(rng.normal(size=(384, 384)))
    words = [
        "shirt",
        "blue",
        "cotton",
        "watch",
        "leather",
        "red",
        "shoe",
        "bag",
        "dress",
        "men",
        "women",
        "sport",
        "casual",
        "black",
        "white",
        "denim",
        "steel",
        "brass",
        "hinge",
        "drill",
        "paint",
        "tile",
    ]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 6))) + f" x{i}" for i in range(3000)]
    unmapped = StaticQueryEncoder(base)

    def target(text: str) -> np.ndarray:
        v = unmapped.encode(text) @ rotation
        return (v / np.linalg.norm(v)).astype(np.float32)

    fitted = StaticQueryEncoder.fit(base, texts, np.stack([target(t) for t in texts]))
    assert fitted.tokens.dtype == np.float16 and fitted.tokens.shape == base.shape
    held_out = ["blue leather watch", "women casual dress", "steel hinge", "red cotton shirt men"]
    agree = [float(fitted.encode(t) @ target(t)) for t in held_out]
    before = [float(unmapped.encode(t) @ target(t)) for t in held_out]
    assert min(agree) > 0.95 and max(before) < 0.5


def test_token_states_are_computed_once_and_kept_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed: list[int] = []

    def compute(encoder: object, progress: object = None) -> np.ndarray:
        computed.append(1)
        return np.arange(20 * 384, dtype=np.float32).reshape(20, 384)

    monkeypatch.setattr(query_encoder, "token_vectors", compute)
    first = cached_token_vectors(tmp_path, lambda: None)  # type: ignore[arg-type,return-value]
    assert (tmp_path / "models" / query_encoder.TOKEN_STATES).is_file() and not first.flags.writeable
    again = cached_token_vectors(tmp_path, lambda: None)  # type: ignore[arg-type,return-value]
    assert np.array_equal(again, first) and not again.flags.writeable  # read back from disk
    assert computed == [1]
    (tmp_path / "models" / query_encoder.TOKEN_STATES).write_bytes(b"not an array")
    with pytest.raises(ValueError):  # a damaged file is an error, not silently other vectors
        cached_token_vectors(tmp_path, lambda: None)  # type: ignore[arg-type,return-value]


def test_fit_refuses_texts_without_vectors() -> None:
    base = np.zeros((10, 384), dtype=np.float32)
    with pytest.raises(ValueError, match="one 384-d vector per text"):
        StaticQueryEncoder.fit(base, [], np.zeros((0, 384), dtype=np.float32))
    with pytest.raises(ValueError, match="one 384-d vector per text"):
        StaticQueryEncoder.fit(base, ["a", "b"], np.zeros((1, 384), dtype=np.float32))


def _with_encoder(config: TenantConfig, encoder: str) -> TenantConfig:
    hybrid = config.global_.hybrid.model_copy(update={"query_encoder": encoder})
    return dataclasses.replace(config, global_=config.global_.model_copy(update={"hybrid": hybrid}))


def test_the_hybrid_stage_embeds_with_the_encoder_the_tenant_chose(
    mini: MiniTenant, table: VectorTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    index = IndexRegistry(tenants, mini.data_dir).get("fashion")
    vectors = VectorSearch(VectorStore(mini.data_dir))
    pipeline = SearchPipeline(default_stages(vectors=vectors), budget_s=30.0)
    used: list[str] = []
    monkeypatch.setattr(vectors, "encode", lambda text: used.append(text) or np.zeros(384, np.float32))
    config = tenants.config("fashion")
    assert config.global_.hybrid.query_encoder == "static"  # the default
    result = pipeline.search(index, config, SearchQuery("watch for my wrist", size=5))
    assert result.query_graph.stage != "none"  # a word matched
    assert result.query_graph.hybrid == "used" and used == []  # no MiniLM call
    pipeline.search(index, _with_encoder(config, "minilm"), SearchQuery("watch for my wrist", size=5))
    assert used == ["watch for my wrist"]
    # no word matched: the nearest products are the whole answer, judged by MiniLM whatever the setting
    nothing = pipeline.search(index, config, SearchQuery("timepiece for my wrist", size=5))
    assert nothing.query_graph.stage == "none" and used[-1] == "timepiece for my wrist"
    assert nothing.query_graph.hybrid_floor is not None
    assert nothing.query_graph.hybrid_floor.encoder == "minilm"


def test_the_fit_in_slices_equals_the_fit_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    base = rng.normal(size=(30_522, 384)).astype(np.float32)
    texts = [f"{w} shirt {i}" for i, w in enumerate(["red", "blue", "linen slim", "cotton"] * 12)]
    vectors = rng.normal(size=(len(texts), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    monkeypatch.setattr(query_encoder, "FIT_ROWS", 7)  # 48 texts: six slices of 7 and one of 6
    sliced = StaticQueryEncoder.fit(base, texts, vectors)

    unmapped = StaticQueryEncoder(base)
    static = np.stack([unmapped.encode(t) for t in texts]).astype(np.float64)
    prior = query_encoder.RIDGE * np.eye(384)
    weights = np.linalg.solve(static.T @ static + prior, static.T @ vectors.astype(np.float64) + prior)
    whole = (base.astype(np.float64) @ weights).astype(np.float16)
    assert sliced.tokens.dtype == np.float16 and sliced.tokens.shape == whole.shape
    assert np.allclose(sliced.tokens.astype(np.float32), whole.astype(np.float32), rtol=1e-3, atol=1e-3)
