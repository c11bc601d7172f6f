"""Which tenants need MiniLM at start-up (issue 32: the model is 140 MB of every search worker)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aisle.vectors.search import VectorSearch


@dataclass
class _Table:
    query: Any


class _Store:
    """The two calls :meth:`VectorSearch.embeds_with_model` makes of a VectorStore."""

    def __init__(self, tables: dict[str, _Table]) -> None:
        self.tables = tables

    def has(self, tenant: str, kind: str = "text") -> bool:
        return tenant in self.tables

    def table(self, tenant: str, kind: str = "text") -> _Table:
        return self.tables[tenant]


def test_only_tenants_whose_searches_embed_with_minilm_need_it() -> None:
    store = _Store({"static": _Table(query=object()), "minilm": _Table(query=object()), "old": _Table(None)})
    encoders = {"static": "static", "minilm": "minilm", "old": "static", "lexical": "minilm"}
    asked: list[str] = []

    def encoder_of(tenant: str) -> str:
        asked.append(tenant)
        return encoders[tenant]

    search = VectorSearch(store)  # type: ignore[arg-type]
    need = {t: search.embeds_with_model(t, encoder_of) for t in encoders}
    # a static table needs no model; "minilm" does; a table without a static encoder falls back to it;
    # a tenant without vectors never embeds, and its configuration is not read
    assert need == {"static": False, "minilm": True, "old": True, "lexical": False}
    assert "lexical" not in asked
