"""Product text vectors: built once per catalog version, reused for unchanged products, searchable."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
from tests.support.vectors import MiniTenant, share_models

from aisle.catalog.store import CatalogStore
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.demo.vectors import build_demo_vectors
from aisle.search.filter_rows import FilterRows
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec
from aisle.vectors.build import build_text_vectors, product_texts
from aisle.vectors.neighbours import LocalNeighbours, NeighbourQuery
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore
from aisle.vectors.text_encoder import TextEncoder


class CountingEncoder:
    """The real encoder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = TextEncoder.load(threads=1)
        self.texts: list[str] = []

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.encode(texts, batch_size=batch_size)


def test_product_text_is_the_searchable_fields(mini: MiniTenant) -> None:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    catalog = CatalogStore(tenants.scope("fashion")).load()
    texts = product_texts(catalog, tenants.config("fashion").attributes)
    first = catalog.products.row(0, named=True)
    assert texts[0].startswith(first["title"])
    assert first["article_type"] in texts[0]


def test_a_second_build_embeds_nothing_and_a_new_version_only_what_changed(mini: MiniTenant) -> None:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    store = CatalogStore(tenants.scope("fashion"))
    counting = CountingEncoder()
    before = build_text_vectors(tenants, "fashion", mini.data_dir, encoder=counting)  # type: ignore[arg-type]
    assert counting.texts == []
    products = store.load().products
    changed = products.with_columns(
        pl.when(pl.col("id") == products["id"][0])
        .then(pl.lit("Completely New Title Kettle"))
        .otherwise(pl.col("title"))
        .alias("title")
    )
    store.write(changed)
    try:
        after = build_text_vectors(tenants, "fashion", mini.data_dir, encoder=counting)  # type: ignore[arg-type]
        assert after != before
        assert len(counting.texts) == 1 and counting.texts[0].startswith("Completely New Title Kettle")
        vs = VectorSearch(VectorStore(mini.data_dir, check_every=0))
        top = vs.neighbours("fashion", text="electric kettle", k=1)
        assert top[0].id == products["id"][0]
    finally:  # back to the original catalog (a third version with the original rows) for other tests
        store.write(products)
        build_text_vectors(tenants, "fashion", mini.data_dir, encoder=counting)  # type: ignore[arg-type]
    assert len(counting.texts) == 1


def test_a_builder_without_earlier_tables_reuses_the_bucket_s_and_embeds_only_what_changed(
    mini: MiniTenant, tmp_path: Path
) -> None:
    bucket = tmp_path / "bucket"  # a copy: the session's tenant keeps its catalog version
    shutil.copytree(Path(mini.storage_url.removeprefix("file://")), bucket)
    tenants = Tenants(open_blob_store(f"file://{bucket}"), ttl=0)
    store = CatalogStore(tenants.scope("fashion"))
    products = store.load().products
    store.write(
        products.with_columns(pl.lit("A Brand New Title").alias("title")).head(1).vstack(products[1:])
    )
    counting = CountingEncoder()
    share_models(tmp_path / "empty")  # the MiniLM token states, made once from the real model
    build_text_vectors(tenants, "fashion", tmp_path / "empty", encoder=counting)  # type: ignore[arg-type]
    assert len(counting.texts) == 1 and counting.texts[0].startswith("A Brand New Title")


def test_text_search_respects_filters(mini: MiniTenant) -> None:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    index = IndexRegistry(tenants, mini.data_dir).get("fashion")
    vs = VectorSearch(VectorStore(mini.data_dir, check_every=0))
    source = LocalNeighbours(vs, FilterRows(lambda tenant: index))
    rows = {r["id"]: r for r in index.rows}
    found = source.neighbours("fashion", NeighbourQuery(k=5, text="wrist watch"))
    assert found and all(-1.0 <= n.score <= 1.0 for n in found)
    assert rows[found[0].id]["article_type"] == "Watches"
    women = source.neighbours(
        "fashion",
        NeighbourQuery(k=10, text="shirt", filters=[FilterSpec(field="gender", value="Women").model_dump()]),
    )
    assert women and all(rows[n.id]["gender"] == "Women" for n in women)
    excluded = source.neighbours("fashion", NeighbourQuery(k=5, text="wrist watch", exclude=[found[0].id]))
    assert found[0].id not in [n.id for n in excluded]


def test_demo_vectors_report_progress_per_tenant_and_nothing_when_built(
    mini: MiniTenant, tmp_path: Path
) -> None:
    # a copy of the bucket without the published tables, and a data dir without tables
    bucket = tmp_path / "bucket"
    shutil.copytree(Path(mini.storage_url.removeprefix("file://")), bucket)
    shutil.rmtree(bucket / "fashion" / "vectors", ignore_errors=True)
    settings = Settings(storage_url=f"file://{bucket}", data_dir=tmp_path / "data")
    calls: dict[str, list[tuple[str, int, int]]] = {}

    def progress_for(label: str) -> Callable[[str, int, int], None]:
        calls[label] = []
        return lambda stage, done, total: calls[label].append((stage, done, total))

    messages: list[str] = []
    built = build_demo_vectors(settings, None, images=False, echo=messages.append, progress_for=progress_for)
    assert set(built) == {"fashion/text"}
    assert set(calls) == {"fashion"}  # mini has no homedepot tenant
    n = len(CatalogStore(Tenants(open_blob_store(settings.storage_url)).scope("fashion")).load().products)
    stages = [c[0] for c in calls["fashion"]]
    last_embed = next(i for i, s in enumerate(stages) if s.startswith("embedded"))
    assert calls["fashion"][last_embed][1:] == (n, n) and stages[last_embed].startswith(f"embedded {n} texts")
    assert stages[:last_embed] == ["embed"] * last_embed
    assert set(stages[last_embed + 1 : -1]) <= {"query tokens"}  # the token table, when not yet computed
    assert stages[-1].startswith("query encoder fitted in")
    assert "homedepot: no such tenant, text vectors skipped" in messages

    calls.clear()
    again = build_demo_vectors(settings, None, images=False, echo=messages.append, progress_for=progress_for)
    assert again == built and calls == {"fashion": []}  # already built: nothing to report

    # another machine (an empty data dir) downloads the published table and embeds nothing
    calls.clear()
    elsewhere = settings.model_copy(update={"data_dir": tmp_path / "elsewhere"})
    fetched = build_demo_vectors(
        elsewhere, None, images=False, echo=messages.append, progress_for=progress_for
    )
    assert calls == {"fashion": []}
    assert (fetched["fashion/text"] / "PUBLISHED").exists()
    assert (fetched["fashion/text"] / "ids.json").read_bytes() == (
        built["fashion/text"] / "ids.json"
    ).read_bytes()
