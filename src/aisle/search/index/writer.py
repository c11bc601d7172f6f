"""Build a tenant's tantivy index from a catalog version, atomically.

The index is written to a temporary directory beside its destination and renamed into place
once committed, so a reader never opens a half-built index.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import tantivy

from aisle.catalog.schema import PATH_SEP
from aisle.catalog.store import Catalog
from aisle.core.atomic_dir import atomic_directory
from aisle.core.tenant_config import AttributeConfiguration, AttributeType
from aisle.search.index.schema import (
    ANALYZER,
    MAX_CATEGORY_LEVELS,
    build_analyzer,
    build_schema,
    keyword_field,
    level_field,
    numeric_field,
)
from aisle.search.normalize import normalize

Progress = Callable[[str, int, int], None]
# Bumped whenever what is written into an index changes (analysis, normalisation, fields), so
# existing indexes are rebuilt rather than read with the wrong assumptions.
INDEX_FORMAT = 2


NOT_INDEXED = {"ask", "question"}
"""Attribute fields that play no part in the index (guided search's)."""


def index_dir(data_dir: Path, tenant: str, version: str, config: AttributeConfiguration) -> Path:
    """Where the index of ``tenant``'s catalog ``version`` under ``config`` lives in the data dir.

    The index format and the attribute configuration's hash are part of the name: a change of
    either means a new index. Guided search's wording and choice (``ask``, ``question``) are left out
    of the hash: they change no index, and an index built before they existed keeps its name.
    """
    indexed = config.model_dump_json(exclude={"attributes": {"__all__": NOT_INDEXED}})
    digest = hashlib.sha1(f"{INDEX_FORMAT}:{indexed}".encode()).hexdigest()[:10]
    return Path(data_dir) / "indexes" / tenant / f"{version}-{digest}"


def build_index(
    catalog: Catalog,
    config: AttributeConfiguration,
    dest: Path,
    *,
    progress: Progress | None = None,
    heap_bytes: int = 256_000_000,
) -> Path:
    """Index every product of ``catalog`` into ``dest`` (replaced atomically). Returns ``dest``."""
    dest = Path(dest)
    with atomic_directory(dest, "CATALOG_VERSION") as tmp:
        schema = build_schema(config)
        index = tantivy.Index(schema, path=str(tmp))
        index.register_tokenizer(ANALYZER, build_analyzer())
        # one indexing thread: with two, how the documents split into segments changed from build to
        # build, and with it the order of products tied on relevance (4832 of 5956 Home Depot dev
        # queries got another first page from a rebuild of the same catalog)
        writer = index.writer(heap_size=heap_bytes, num_threads=1)
        products = catalog.products
        total = products.height
        columns = {c: products[c].to_list() for c in products.columns}
        ids = columns["id"]
        plan = []
        for attr in config.attributes:
            values = columns.get(attr.name)
            if values is None:
                continue
            plan.append((attr, values, keyword_field(attr), numeric_field(attr)))
        for i in range(total):
            doc = tantivy.Document()
            doc.add_unsigned("ord", i)
            doc.add_text("id", ids[i])
            for attr, values, kf, nf in plan:
                value = values[i]
                if value is None:
                    continue
                if attr.searchable:
                    doc.add_text(f"s_{attr.name}", normalize(str(value).replace(PATH_SEP, " ")))
                if kf:
                    doc.add_text(kf, value)
                    if attr.type is AttributeType.category_path:
                        parts = value.split(PATH_SEP)
                        for level in range(min(len(parts), MAX_CATEGORY_LEVELS)):
                            doc.add_text(level_field(attr, level), PATH_SEP.join(parts[: level + 1]))
                if nf:
                    if attr.type is AttributeType.number:
                        doc.add_float(nf, float(value))
                    else:
                        doc.add_integer(nf, int(value))
                if attr.type is AttributeType.boolean and (attr.filterable or attr.facetable):
                    doc.add_boolean(f"b_{attr.name}", bool(value))
            writer.add_document(doc)
            if progress and (i + 1) % 10000 == 0:
                progress("index", i + 1, total)
        writer.commit()
        writer.wait_merging_threads()
        (tmp / "CATALOG_VERSION").write_text(catalog.version)
        if progress:
            progress("index", total, total)
    return dest
