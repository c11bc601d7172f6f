"""Build a tenant's product text embeddings once per catalog version (``aisle vectors build``).

Product text: the searchable attributes of the tenant's configuration, in configuration order, joined
with ". " (for the fashion demo: title, brand, colour, gender, category path, article type, usage;
for Home Depot: the title). Embedded with the MiniLM encoder (:mod:`aisle.vectors.text_encoder`).
Vectors of products whose text did not change since the previous catalog version are reused (content
hash), so a re-import only pays for new or changed products, and a second run pays nothing.
Each table is published to the tenant's bucket scope once built (:mod:`aisle.vectors.published`), and
a build whose table is in the bucket already downloads it instead of embedding anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from aisle.catalog.schema import PATH_SEP
from aisle.catalog.store import Catalog, CatalogStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import AttributeConfiguration
from aisle.vectors.published import ensure_published, fetch_newest_of_recipe, fetch_published
from aisle.vectors.query_encoder import QUERY_TOKENS, StaticQueryEncoder, cached_token_vectors
from aisle.vectors.similarity_floor import cached_null_vectors, calibrate, static_null_vectors
from aisle.vectors.table import (
    content_hash,
    read_table_vectors,
    reusable,
    table_dir,
    tables_dir,
    write_table,
)
from aisle.vectors.text_encoder import DIMENSION, ENCODER_ID, TextEncoder
from aisle.vectors.writes import superseded_from_now

if TYPE_CHECKING:
    from aisle.vectors.ann_usearch import UsearchAnnIndex

Progress = Callable[[str, int, int], None]
TEXT_ENCODER_ID = ENCODER_ID


def text_fields(config: AttributeConfiguration) -> list[str]:
    """Names of the attributes that make up the product text (the searchable ones)."""
    return [a.name for a in config.attributes if a.searchable]


def text_recipe(config: AttributeConfiguration) -> str:
    return f"{TEXT_ENCODER_ID}:{','.join(text_fields(config))}"


def product_texts(catalog: Catalog, config: AttributeConfiguration) -> list[str]:
    """One text per catalog row (:func:`product_text` of its searchable values)."""
    products = catalog.products
    columns = [products[name].to_list() for name in text_fields(config) if name in products.columns]
    return [product_text(column[i] for column in columns) for i in range(products.height)]


def product_text(values: Iterable[Any]) -> str:
    """A product's text: its distinct non-empty searchable values, in configuration order, category
    paths with spaces for separators, joined with ". "."""
    parts: list[str] = []
    for value in values:
        if value is None or value == "":
            continue
        text = str(value).replace(PATH_SEP, " ").strip()
        if text and text not in parts:
            parts.append(text)
    return ". ".join(parts)


def build_text_vectors(
    tenants: Tenants,
    tenant: str,
    data_dir: Path,
    *,
    encoder: TextEncoder | None = None,
    progress: Progress | None = None,
    chunk_texts: int = 4096,
) -> Path:
    """The tenant's text vector table for its current catalog, built if missing (downloaded when the
    bucket has it), published to the bucket; returns its local directory.

    Cost: MiniLM in integer arithmetic on 2 CPU cores embeds roughly 380-590 short product texts a
    second (:mod:`aisle.vectors.text_encoder`), so a minute or two for either demo catalog the first
    time; nothing when the table exists here or in the bucket.
    The table also holds the tenant's static query encoder (:mod:`aisle.vectors.query_encoder`): a few
    seconds to fit, plus about 30 s once per data directory for MiniLM's token states.

    Raises:
        TenantNotFound, ConfigInvalid, CatalogNotFound: the tenant or its catalog is missing.
        EncoderUnavailable: the MiniLM model packages are not installed.
        StorageUnavailable (503): the bucket failed (the table may be built locally all the same).
    """
    config = tenants.config(tenant).attributes
    scope = tenants.scope(tenant)
    catalog = CatalogStore(scope).load()
    recipe = text_recipe(config)
    dest = table_dir(data_dir, tenant, "text", catalog.version, recipe)
    if (dest / "BUILT").exists() or fetch_published(scope, "text", dest):
        return ensure_published(scope, "text", dest)
    writes = superseded_from_now(scope, "text")  # the API's writes so far: this build supersedes them
    texts = product_texts(catalog, config)
    hashes = np.asarray([content_hash(t.encode()) for t in texts], dtype=np.uint64)
    previous = reusable(data_dir, tenant, "text", recipe)
    if not previous:  # a machine without earlier tables: reuse the bucket's newest of this recipe
        digest = dest.name.rsplit("-", 1)[1]
        if fetch_newest_of_recipe(scope, "text", tables_dir(data_dir, tenant, "text"), digest) is not None:
            previous = reusable(data_dir, tenant, "text", recipe)
    vectors = np.zeros((len(texts), DIMENSION), dtype=np.float32)
    todo = []
    for i, h in enumerate(hashes):
        old = previous.get(int(h))
        if old is None:
            todo.append(i)
        else:
            vectors[i] = old
    if todo:
        encoder = encoder or TextEncoder.load(models_dir=Path(data_dir) / "models")
        start = time.perf_counter()
        for lo in range(0, len(todo), chunk_texts):  # a chunk at a time: progress, sorted by length
            chunk = todo[lo : lo + chunk_texts]
            vectors[chunk] = encoder.encode([texts[i] for i in chunk])
            if progress:
                progress("embed", lo + len(chunk), len(todo))
        if progress:
            rate = len(todo) / max(time.perf_counter() - start, 1e-9)
            progress(f"embedded {len(todo)} texts at {rate:.0f}/s", len(todo), len(todo))
    ids = catalog.products["id"].to_list()
    query = _query_encoder(
        data_dir,
        texts,
        vectors,
        lambda: encoder or TextEncoder.load(models_dir=Path(data_dir) / "models"),
        progress,
    )
    extras = {QUERY_TOKENS: query.tokens}

    def floors(ann: UsearchAnnIndex) -> dict[str, float]:
        def model() -> TextEncoder:
            return encoder or TextEncoder.load(models_dir=Path(data_dir) / "models")

        return {
            "static": calibrate(ann, static_null_vectors(query.encode)),
            "minilm": calibrate(ann, cached_null_vectors(data_dir, model)),
        }

    table = write_table(dest, catalog.version, ids, vectors, hashes, extras=extras, floors=floors)
    return ensure_published(scope, "text", table, writes=writes)


def _query_encoder(
    data_dir: Path,
    texts: list[str],
    vectors: np.ndarray,
    encoder: Callable[[], TextEncoder],
    progress: Progress | None,
) -> StaticQueryEncoder:
    """The tenant's static query encoder (:mod:`aisle.vectors.query_encoder`), fitted on its product
    texts and their vectors (texts without a word are left out)."""
    start = time.perf_counter()
    base = cached_token_vectors(data_dir, encoder, progress=progress)
    keep = [i for i, t in enumerate(texts) if t.strip()]
    if keep and len(keep) < len(texts):  # copies only when some text has no word
        query = StaticQueryEncoder.fit(base, [texts[i] for i in keep], vectors[keep])
    else:
        query = StaticQueryEncoder.fit(base, texts, vectors)
    if progress:
        progress(f"query encoder fitted in {time.perf_counter() - start:.1f} s", len(keep), len(keep))
    return query


def built_text_vectors(tenants: Tenants, tenant: str, data_dir: Path, catalog: Catalog) -> np.ndarray | None:
    """The text vectors already built for ``catalog`` (float32, (rows of ``catalog.products``, 384), unit
    length, in catalog row order), or None when its table is neither here nor in the bucket, or lacks
    a product.

    Lets SIMILAR_ITEMS reuse the embeddings of vector search instead of encoding the catalog again.
    Raises TenantNotFound, ConfigInvalid, StorageUnavailable.
    """
    dest = table_dir(
        data_dir, tenant, "text", catalog.version, text_recipe(tenants.config(tenant).attributes)
    )
    if not (dest / "BUILT").exists() and not fetch_published(tenants.scope(tenant), "text", dest):
        return None
    return read_table_vectors(dest, [str(x) for x in catalog.products["id"].to_list()])
