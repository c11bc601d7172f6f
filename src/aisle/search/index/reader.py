"""A loaded tenant index: the tantivy searcher plus what is needed to answer from memory.

Hits carry a catalog row number (``ord``); products are rendered from the rows held in memory
(:class:`~aisle.search.index.rows.ProductRows`, compact), so no stored document is read on the hot path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import tantivy

from aisle.core.mapped import DONE, host_lock
from aisle.core.tenant_config import Attribute, AttributeConfiguration, AttributeRole
from aisle.search.attributes import AttributeDictionary, build_dictionary
from aisle.search.index.fuzzy import FuzzyTerms
from aisle.search.index.overlay import LiveRows
from aisle.search.index.rows import ProductRows
from aisle.search.index.schema import ANALYZER, build_analyzer, numeric_field
from aisle.search.index.serving_tables import (
    TABLES_DIR,
    ServingTables,
    load_serving_tables,
    memory_tables,
    write_serving_tables,
)
from aisle.search.index.shared_rows import ROWS_DIR, load_rows, shared_rows
from aisle.search.spelling import SpellingCorrector

log = logging.getLogger("aisle.search")

SPEC_FIELDS = {  # spec "Search response": each product has id, title, price, brand, color, score
    AttributeRole.title: "title",
    AttributeRole.price: "price",
    AttributeRole.brand: "brand",
    AttributeRole.color: "color",
}


def row_sources(columns: Sequence[str], config: AttributeConfiguration) -> dict[str, str | None]:
    """Row key -> catalog column (None: always None) of the rows a search answers with: ``id``, the
    returned attributes among ``columns`` in configuration order, then each spec field name (title,
    price, brand, color) the configuration names otherwise, holding that attribute's value."""
    sources: dict[str, str | None] = {"id": "id"}
    for attr in config.attributes:
        if attr.returned and attr.name in columns:
            sources[attr.name] = attr.name
    for attr in config.attributes:  # spec field names (title, price, brand, color) always present
        if attr.role in SPEC_FIELDS and attr.name != SPEC_FIELDS[attr.role] and attr.name in columns:
            sources[SPEC_FIELDS[attr.role]] = attr.name  # replaces a returned column of that name in place
    for alias in SPEC_FIELDS.values():
        sources.setdefault(alias, None)
    return sources


def product_rows(products: pl.DataFrame, config: AttributeConfiguration, chunk: int = 8192) -> ProductRows:
    """The rows a search answers with, one per catalog product in catalog order (keys:
    :func:`row_sources`; None when no attribute has a spec field's role).
    ``rows[o]`` equals ``products.select(returned).to_dicts()[o]`` with those spec fields set.
    Read ``chunk`` rows at a time, so the Python values of only that many rows exist at once."""
    sources = row_sources(products.columns, config)

    def values() -> Iterator[tuple[Any, ...]]:
        for start in range(0, products.height, chunk):
            part = products.slice(start, chunk)
            columns = [part[c].to_list() if c is not None else [None] * part.height for c in sources.values()]
            yield from zip(*columns, strict=True)

    return ProductRows(list(sources), values())


def hit_count(result: tantivy.SearchResult) -> int:
    """The match count of a search run with ``count=True`` (absent from tantivy's type stubs)."""
    return int(getattr(result, "count", 0) or 0)


@dataclass
class TenantIndex:
    """Searcher, schema, analyzer and the in-memory product rows of one tenant's catalog version.

    ``rows[o]`` is catalog row ``o``'s returned fields as a new dict (see :func:`product_rows`);
    ``ids[o]`` its product id (:meth:`product_ids`) and ``ord_by_id`` the way back.
    ``keyword_values`` maps, per keyword attribute, a lowercased value to every spelling the catalog
    uses for it (``"adidas" -> ["ADIDAS", "Adidas"]``), so filters are case-insensitive.
    ``searchable`` holds the raw values of the searchable attributes, one Series per attribute in
    configuration order, row ``ord`` per product (read by the learned ranker's text features).
    ``derived`` caches data other modules build from this index on first use (the ranker's tokens).

    A followed index (:mod:`aisle.search.index.live`) is a series of immutable *snapshots* of one
    catalog ``version``: ``sequence`` is the change-log entry the snapshot reflects (the version's own
    sequence until an entry is applied), ``generation`` counts the snapshots of one ``lineage`` (a name
    for one assignment of rows to products: the version and the index copy applied to). Rows written
    since the version are appended (:mod:`aisle.search.index.overlay`), so ``rows``, ``ids``,
    ``ord_by_id`` and ``searchable`` are the version's plus those; a cache of anything per row is keyed
    by ``(lineage, generation)`` or grows with the rows (:meth:`catalog_rows`), never by ``version``
    alone. ``derived`` is shared by the snapshots of one lineage: what it holds must allow for rows
    appended after it was built.
    """

    tenant: str
    version: str
    config: AttributeConfiguration
    index: tantivy.Index
    searcher: tantivy.Searcher
    schema: tantivy.Schema
    analyzer: tantivy.TextAnalyzer
    rows: ProductRows | LiveRows
    ids: Sequence[str]
    ord_by_id: Mapping[str, int]
    keyword_values: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    speller: SpellingCorrector = field(default_factory=lambda: SpellingCorrector({}))
    dictionary: AttributeDictionary = field(default_factory=AttributeDictionary)
    price_ranges: list[tuple[float | None, float | None]] = field(default_factory=list)
    searchable: list[Any] = field(default_factory=list)  # pl.Series, or overlay.Appended of one
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    sequence: int = 0
    generation: int = 0
    lineage: str = ""

    @classmethod
    def open(
        cls,
        tenant: str,
        path: Path,
        version: str,
        products: Callable[[], pl.DataFrame],
        config: AttributeConfiguration,
        *,
        sequence: int = 0,
    ) -> TenantIndex:
        """The index at ``path`` of catalog ``version`` under ``config``, reflecting change-log
        ``sequence``. Its rows and serving tables are mapped from files beside the index
        (:mod:`~aisle.search.index.shared_rows`, :mod:`~aisle.search.index.serving_tables`), written
        first under the host's lock by the process that finds them missing; only that one calls
        ``products`` (the version's catalog frame, read when called).

        Raises:
            OSError: the index cannot be read.
        """
        index = tantivy.Index.open(str(path))
        analyzer = build_analyzer()
        index.register_tokenizer(ANALYZER, analyzer)
        index.reload()
        rows, tables = shared_tables(path, products, config)
        dictionary = build_dictionary(config, tables.value_counts, lambda text: list(analyzer.analyze(text)))
        return cls(
            tenant=tenant,
            version=version,
            config=config,
            index=index,
            searcher=index.searcher(),
            schema=index.schema,
            analyzer=analyzer,
            rows=rows,
            ids=tables.ids,
            ord_by_id=tables.ord_by_id,
            keyword_values=tables.keyword_values,
            speller=SpellingCorrector(tables.vocabulary),
            dictionary=dictionary,
            price_ranges=tables.price_ranges,
            searchable=list(tables.searchable),
            sequence=sequence,
            lineage=f"{version}@{path}",
        )

    def analyze(self, text: str) -> list[str]:
        """Index-time tokens of ``text`` (lowercased, folded, stemmed)."""
        return list(self.analyzer.analyze(text))

    def attribute(self, name: str) -> Attribute | None:
        return self.config.by_name(name)

    def ords(self, hits: list[tuple[Any, tantivy.DocAddress]]) -> list[int]:
        """Catalog row numbers of search hits, in order."""
        return [int(o) for o in self.searcher.fast_field_values("ord", [addr for _, addr in hits])]  # type: ignore[arg-type]

    @property
    def price_field(self) -> str | None:
        """The tantivy field of the price attribute, or None when the catalog has no sortable price."""
        attr = self.config.by_role(AttributeRole.price)
        return numeric_field(attr) if attr is not None else None

    def count(self, query: tantivy.Query) -> int:
        """How many products match ``query``."""
        return hit_count(self.searcher.search(query, 1, count=True))

    def num_docs(self) -> int:
        return int(self.searcher.num_docs)

    def fuzzy_terms(self) -> FuzzyTerms:
        """This index's typo expansions (:class:`~aisle.search.index.fuzzy.FuzzyTerms`), made on first
        use: shared by every search of this index, gone with it when a new one is opened."""
        fuzzy = self.derived.get("fuzzy_terms")
        if fuzzy is None:
            fuzzy = self.derived.setdefault("fuzzy_terms", FuzzyTerms(self.searcher))
        return fuzzy  # type: ignore[no-any-return]

    def product_ids(self) -> Sequence[str]:
        """The product id of each catalog row, in row order (``rows[o]["id"]`` without reading the row;
        the same str objects as the keys of ``ord_by_id``). A row of a product changed or deleted since
        keeps its id (its document is gone, so no search returns it)."""
        return self.ids

    def catalog_rows(self) -> CatalogRowsOf:
        """This snapshot's rows as the vector layer reads them
        (:class:`~aisle.vectors.search.CatalogRows`): named by ``lineage``, so a mapping kept per name
        is extended, never reused, as rows are appended."""
        return CatalogRowsOf(self.lineage or self.version, self.ids)


def tables_ready(path: Path) -> bool:
    """Whether the rows and serving tables beside the index at ``path`` are written (nothing to build)."""
    return (path / ROWS_DIR / DONE).exists() and (path / TABLES_DIR / DONE).exists()


def shared_tables(
    path: Path, products: Callable[[], pl.DataFrame], config: AttributeConfiguration
) -> tuple[ProductRows, ServingTables]:
    """The rows and serving tables of the index at ``path``, mapped; written first (one process of the
    host at a time, the others waiting for its files, ``products`` read only then) when missing. Where
    they cannot be written they are served from this process's memory."""
    rows = load_rows(path / ROWS_DIR)
    tables = load_serving_tables(path / TABLES_DIR)
    if rows is not None and tables is not None:
        return rows, tables
    with host_lock(path / ".serving.lock"):
        frame: pl.DataFrame | None = None

        def catalog() -> pl.DataFrame:
            nonlocal frame
            if frame is None:
                frame = products()
            return frame

        rows = shared_rows(path, lambda: product_rows(catalog(), config))
        tables = load_serving_tables(path / TABLES_DIR)
        if tables is None:
            try:
                write_serving_tables(path / TABLES_DIR, catalog(), config)
                tables = load_serving_tables(path / TABLES_DIR)
            except OSError as exc:
                log.warning("serving tables of %s kept in memory, not shared (%s)", path, exc)
            if tables is None:
                tables = memory_tables(catalog(), config)
    return rows, tables


@dataclass(frozen=True)
class CatalogRowsOf:
    """Rows named ``version`` (one name: rows only ever appended) with the product id of each."""

    version: str
    ids: Sequence[str]

    def product_ids(self) -> Sequence[str]:
        return self.ids
