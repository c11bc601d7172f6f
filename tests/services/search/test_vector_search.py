"""POST /vector-search and POST /images/search on the search service (real MiniLM, EfficientNet, usearch)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from tests.support.auth import free_port
from tests.support.vectors import MiniTenant, mini_fashion
from tests.support.waiting import wait_until

from aisle.catalog.datasets import fashion
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.services.search.app import create_app
from aisle.vectors.image_input import MAX_IMAGE_BYTES


def _answers(url: str, proc: subprocess.Popen[bytes]) -> bool:
    assert proc.poll() is None, "the vector service exited"
    try:
        return httpx.get(f"{url}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> MiniTenant:
    return mini_fashion(tmp_path_factory.getbasetemp() / "vectors-mini", shared_data)


@pytest.fixture(scope="module")
def client(mini: MiniTenant) -> Iterator[TestClient]:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    if not tenants.exists("bare"):
        tenants.write_config("bare", fashion.configs())
    settings = Settings(
        storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off", predict_url="http://127.0.0.1:9"
    )
    with TestClient(create_app(settings, preload=False)) as c:
        yield c


def _rows(client: TestClient) -> dict[str, dict]:
    items = client.get("/items", params={"tenant": "fashion", "size": 100}).json()["items"]
    more = client.get("/items", params={"tenant": "fashion", "size": 100, "from": 100}).json()["items"]
    return {p["id"]: p for p in items + more}


def test_vector_search_has_the_search_response_shape(client: TestClient) -> None:
    body = {"query": "wrist watch", "tenant": "fashion", "size": 5, "facets": ["gender", "brand"]}
    resp = client.post("/vector-search", json=body)
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert set(out) == {"products", "total", "facets", "queryGraph", "redirect", "attributionToken"}
    assert len(out["products"]) == 5 and out["total"] >= 5
    assert {"id", "title", "price", "brand", "color", "score"} <= set(out["products"][0])
    assert "watch" in out["products"][0]["title"].lower()
    assert sum(v["count"] for v in out["facets"]["gender"]) == out["total"]
    assert out["queryGraph"]["normalized"] == "wrist watch"
    assert out["queryGraph"]["stages_tried"] == [{"stage": "vector", "hits": out["total"]}]


def test_vector_search_filters_pages_and_sorts(client: TestClient) -> None:
    base = {"query": "shirt", "tenant": "fashion", "filters": [{"field": "gender", "value": "Women"}]}
    first = client.post("/vector-search", json={**base, "size": 3}).json()
    second = client.post("/vector-search", json={**base, "size": 3, "from": 3}).json()
    rows = _rows(client)
    ids = [p["id"] for p in first["products"] + second["products"]]
    assert len(set(ids)) == 6 and all(rows[i]["gender"] == "Women" for i in ids)
    assert first["queryGraph"]["filters"][0]["field"] == "gender"
    cheap = client.post("/vector-search", json={**base, "size": 10, "sort": "price_asc"}).json()["products"]
    prices = [p["price"] for p in cheap]
    assert prices == sorted(prices)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": "x", "tenant": "nope"}, 404, "tenant_not_found"),
        ({"query": "x", "tenant": "bare"}, 404, "catalog_not_found"),
        ({"query": "  ", "tenant": "fashion"}, 400, "query_required"),
        ({"query": "x", "tenant": "fashion", "size": 101}, 422, "validation_error"),
        ({"query": "x", "tenant": "fashion", "facets": ["nope"]}, 400, "facet_unknown"),
    ],
)
def test_vector_search_errors(client: TestClient, body: dict, status: int, code: str) -> None:
    resp = client.post("/vector-search", json=body)
    assert resp.status_code == status, resp.text
    assert resp.json()["error"]["code"] == code


def test_a_tenant_without_vectors_answers_503(mini: MiniTenant, tmp_path: Path) -> None:
    # the bucket without the published tables, and a data dir without tables
    bucket = tmp_path / "bucket"
    shutil.copytree(Path(mini.storage_url.removeprefix("file://")), bucket)
    shutil.rmtree(bucket / "fashion" / "vectors", ignore_errors=True)
    settings = Settings(storage_url=f"file://{bucket}", data_dir=tmp_path / "data", auth="off")
    with TestClient(create_app(settings, preload=False)) as c:
        resp = c.post("/vector-search", json={"query": "watch", "tenant": "fashion"})
    assert resp.status_code == 503
    assert resp.json()["error"]["code"] == "vector_index_missing"


def test_an_empty_data_dir_serves_the_vectors_published_to_the_bucket(
    mini: MiniTenant, tmp_path: Path
) -> None:
    settings = Settings(storage_url=mini.storage_url, data_dir=tmp_path, auth="off")
    with TestClient(create_app(settings, preload=False)) as c:
        resp = c.post("/vector-search", json={"query": "watch", "tenant": "fashion"})
    assert resp.status_code == 200 and resp.json()["products"]
    assert list((tmp_path / "vectors" / "fashion" / "text").glob("*/PUBLISHED"))  # downloaded


def test_vector_search_through_the_vector_service(client: TestClient, mini: MiniTenant) -> None:
    port = free_port()
    env = {
        **os.environ,
        "AISLE_STORAGE_URL": mini.storage_url,
        "AISLE_DATA_DIR": str(mini.data_dir),
        "AISLE_AUTH": "off",
    }
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "aisle.services.vectors.app:create_app",
           "--port", str(port), "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env)
    try:
        wait_until(
            lambda: _answers(f"http://127.0.0.1:{port}", proc), "the vector service answers", every=0.3
        )
        settings = Settings(
            storage_url=mini.storage_url,
            data_dir=mini.data_dir,
            auth="off",
            vector_url=f"http://127.0.0.1:{port}",
        )
        body = {
            "query": "blue jeans",
            "tenant": "fashion",
            "size": 5,
            "filters": [{"field": "gender", "value": "Men"}],
        }
        with TestClient(create_app(settings, preload=False)) as remote:
            over_http = remote.post("/vector-search", json=body).json()
        local = client.post("/vector-search", json=body).json()
        assert [p["id"] for p in over_http["products"]] == [p["id"] for p in local["products"]]
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    settings = Settings(
        storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off", vector_url="http://127.0.0.1:9"
    )
    with TestClient(create_app(settings, preload=False)) as down:
        resp = down.post("/vector-search", json={"query": "jeans", "tenant": "fashion"})
    assert resp.status_code == 503 and resp.json()["error"]["code"] == "vector_service_unavailable"


def test_image_search_finds_similar_products(client: TestClient, mini: MiniTenant) -> None:
    if not mini.has_images:  # skip locally, fail in CI (as tests/conftest.py's require)
        msg = "the image extra is not installed (pip install -e '.[image]')"
        pytest.fail(msg) if os.environ.get("CI", "").lower() in ("1", "true", "yes") else pytest.skip(msg)
    rows = _rows(client)
    query_id = next(i for i in mini.ids if rows[i]["article_type"] == "Watches")
    photo = (mini.images_dir / f"{query_id}.jpg").read_bytes()
    resp = client.post(
        "/images/search",
        params={"tenant": "fashion", "size": 5, "exclude": query_id},
        files={"file": ("q.jpg", photo, "image/jpeg")},
    )
    assert resp.status_code == 200, resp.text
    products = resp.json()["products"]
    assert len(products) == 5 and query_id not in [p["id"] for p in products]
    assert sum(rows[p["id"]]["article_type"] == "Watches" for p in products) >= 4
    same = client.post(
        "/images/search", params={"tenant": "fashion", "size": 1}, files={"file": ("q.jpg", photo)}
    )
    assert same.json()["products"][0]["id"] == query_id  # the photo itself is its own nearest


def _png(size: tuple[int, int], mode: str = "RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size).save(buf, format="PNG")
    return buf.getvalue()


def _gif() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, format="GIF")
    return buf.getvalue()


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        (b"", 400, "image_empty"),
        (b"this is not an image at all", 400, "image_invalid"),
        (_gif(), 415, "image_format"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * (8 * 1024 * 1024), 413, "image_too_large"),
        (_png((10_000, 10_000), "1"), 413, "image_too_many_pixels"),
        (_png((64, 64))[:60], 400, "image_invalid"),
    ],
    ids=["empty", "not-an-image", "gif", "too-large", "decompression-bomb", "truncated"],
)
def test_image_search_refuses_bad_uploads(client: TestClient, payload: bytes, status: int, code: str) -> None:
    resp = client.post("/images/search", params={"tenant": "fashion"}, files={"file": ("x.png", payload)})
    assert resp.status_code == status, resp.text
    assert resp.json()["error"]["code"] == code


def test_image_search_needs_a_file_and_a_tenant(client: TestClient) -> None:
    assert client.post("/images/search", params={"tenant": "fashion"}).status_code == 422
    resp = client.post("/images/search", files={"file": ("x.png", _png((8, 8)))})
    assert resp.status_code == 422


def test_an_image_of_almost_8_mib_passes_the_body_limit(client: TestClient, mini: MiniTenant) -> None:
    """The upload route's limit (AISLE_MAX_UPLOAD_BYTES) admits the largest image plus multipart framing."""
    if not mini.has_images:  # skip locally, fail in CI (as tests/conftest.py's require)
        msg = "the image extra is not installed (pip install -e '.[image]')"
        pytest.fail(msg) if os.environ.get("CI", "").lower() in ("1", "true", "yes") else pytest.skip(msg)
    noise = np.random.default_rng(16).integers(0, 256, (1670, 1670, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(noise).save(buf, format="PNG", compress_level=0)
    photo = buf.getvalue()
    assert 7.9 * 1024 * 1024 < len(photo) <= MAX_IMAGE_BYTES
    resp = client.post("/images/search", params={"tenant": "fashion"}, files={"file": ("big.png", photo)})
    assert resp.status_code == 200, resp.text
    too_big = client.post(
        "/images/search", params={"tenant": "fashion"}, files={"file": ("x.png", b"\0" * (10 * 1024 * 1024))}
    )
    assert too_big.status_code == 413
    assert too_big.json()["error"]["code"] == "payload_too_large"  # refused by the body limit, unread


def test_start_up_opens_every_tenants_text_vectors(tmp_path: Path, shared_data: Path) -> None:
    from aisle.catalog.importer import import_catalog
    from aisle.search.stages.hybrid import Hybrid
    from aisle.vectors.build import build_text_vectors

    own = mini_fashion(tmp_path / "two-tenants", shared_data, products=30, images=False)
    tenants = Tenants(open_blob_store(own.storage_url), ttl=0)
    tenants.write_config("apparel", fashion.configs())  # sorts before "fashion"
    import_catalog(tenants, "apparel", tmp_path / "two-tenants" / "products.jsonl")
    build_text_vectors(tenants, "apparel", own.data_dir)
    tenants.write_config("bare", fashion.configs())  # no catalog, no vectors: skipped, not fatal
    settings = Settings(
        storage_url=own.storage_url, data_dir=own.data_dir, auth="off", predict_url="http://127.0.0.1:9"
    )
    app = create_app(settings, preload=True)
    with TestClient(app):
        (hybrid,) = [s for s in app.state.search.engine.pipeline.stages if isinstance(s, Hybrid)]
        assert hybrid.vectors is not None
        opened = hybrid.vectors.store.opened()
    assert opened == {("apparel", "text"), ("fashion", "text")}


def test_start_up_opens_photo_tables_and_runs_the_photo_model(mini: MiniTenant) -> None:
    if not mini.has_images:  # skip locally, fail in CI (as tests/conftest.py's require)
        msg = "the image extra is not installed (pip install -e '.[image]')"
        pytest.fail(msg) if os.environ.get("CI", "").lower() in ("1", "true", "yes") else pytest.skip(msg)
    from aisle.search.stages.hybrid import Hybrid
    from aisle.vectors.image_encoder import ImageEncoder

    runs: list[int] = []
    real = ImageEncoder.encode

    def counting(self: ImageEncoder, images: list, batch_size: int = 32) -> object:
        runs.append(len(images))
        return real(self, images, batch_size=batch_size)

    settings = Settings(
        storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off", predict_url="http://127.0.0.1:9"
    )
    app = create_app(settings, preload=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ImageEncoder, "encode", counting)
        with TestClient(app):
            (hybrid,) = [s for s in app.state.search.engine.pipeline.stages if isinstance(s, Hybrid)]
            assert hybrid.vectors is not None
            assert ("fashion", "image") in hybrid.vectors.store.opened()
            assert runs == [1]  # one blank photo through the model at start-up
