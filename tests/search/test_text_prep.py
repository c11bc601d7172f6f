"""A large build's searchable text normalised in a helper process (issue 42) gives the same index as
normalising in the builder, and a helper that fails leaves the work to the builder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import tantivy

from aisle.catalog.store import Catalog
from aisle.core.tenant_config import Attribute, AttributeConfiguration
from aisle.search.index import text_prep, writer
from aisle.search.index.schema import ANALYZER, build_analyzer
from aisle.search.index.writer import build_index

CONFIG = AttributeConfiguration(
    attributes=[
        Attribute(name="title", type="text", role="title", searchable=True),
        Attribute(name="brand", role="brand", searchable=True, filterable=True),
        Attribute(name="category", type="category_path", role="category", searchable=True),
        Attribute(name="price", type="number", role="price"),
    ]
)
TITLES = ['1/2" PVC Pipe 10 ft.', "Café Crème 60W Bulb", "2x4 Stud 8'", "Drill/Driver 12-Volt", "Ünïcode Saw"]


def _catalog(n: int = 700) -> Catalog:
    return Catalog(
        "v1",
        pl.DataFrame(
            {
                "id": [f"p{i}" for i in range(n)],
                "title": [f"{TITLES[i % 5]} {i}" if i % 11 else None for i in range(n)],
                "brand": [["Acme", "BOLT", None, "Ünï"][i % 4] for i in range(n)],
                "category": [f"Tools>Power>{i % 7}" for i in range(n)],
                "price": [float(i % 50) for i in range(n)],
            }
        ),
    )


def _dump(path: Path) -> dict[str, Any]:
    """Every document's stored fields and every searchable field's terms: what a search can read."""
    index = tantivy.Index.open(str(path))
    index.register_tokenizer(ANALYZER, build_analyzer())
    index.reload()
    searcher = index.searcher()
    segments = [s["max_doc"] for s in json.loads((path / "meta.json").read_text())["segments"]]
    terms = {
        f: sorted(t for t, _ in searcher.terms_with_prefix(f, ""))
        for f in ("s_title", "s_brand", "s_category")
    }
    hits = searcher.search(index.parse_query("pvc OR cafe OR volt OR unicode", ["s_title"]), 1000).hits
    return {"segments": segments, "terms": terms, "hits": [(round(s, 5), a.doc) for s, a in hits]}


def test_the_helper_builds_the_same_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = _catalog()
    plain = _dump(build_index(catalog, CONFIG, tmp_path / "plain"))
    monkeypatch.setattr(text_prep, "MIN_ROWS", 0)
    monkeypatch.setattr(writer, "BUILD_CHUNK", 64)  # 11 chunks: the helper runs ahead of the builder
    helped = _dump(build_index(catalog, CONFIG, tmp_path / "helped"))
    assert helped == plain and plain["hits"] and plain["terms"]["s_title"]


def test_a_failing_helper_leaves_the_chunks_to_the_builder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = _catalog(300)
    plain = _dump(build_index(catalog, CONFIG, tmp_path / "plain"))

    class Broken:
        def submit(self, *args: object) -> object:
            raise RuntimeError("the helper died")

    prep = text_prep.TextPrep(Broken(), iter([[["A b"]], [["C d"]]]))  # type: ignore[arg-type]
    assert prep.next() == [["a b"]] and prep.next() == [["c d"]]
    monkeypatch.setattr(text_prep, "MIN_ROWS", 0)
    monkeypatch.setattr(text_prep, "helper_job", _die_in_helper)
    assert _dump(build_index(catalog, CONFIG, tmp_path / "helped")) == plain


def _die_in_helper(columns: Any) -> Any:
    import os

    os._exit(3)  # the helper process goes; the builder carries on
