"""A synthetic catalog of any size from the demo catalogs' vocabulary: ``aisle demo scale`` (issue 42).

``aisle demo scale --tenant scale --products N --seed S`` writes ``catalog.parquet`` and
``queries.txt`` and imports the catalog as the tenant ``scale``. Not part of ``make run``.

**Products.** Each product starts from a template row of :mod:`aisle.demo.scale_source` (a Myntra or a
Home Depot product, drawn uniformly, so the two families keep their source shares, 45/55), and takes
its brand, its colour (or finish), its price and its description from other rows of the template's
group (same article type; Home Depot: same head noun), each drawn uniformly. The title is the
template's with the brand and the colour swapped (``Nike Men Printed White Tshirts`` ->
``Puma Men Printed Navy Blue Tshirts``; ``Delta Vero ... Faucet in Chrome`` -> ``MOEN Vero ... Faucet
in Brushed Nickel``), so a brand's, a colour's and a type's share follow the source. Categories are the
template's (Myntra: master > sub > article type; Home Depot: ``Home Improvement`` > head noun > type),
with gender, usage, season and year; descriptions are the Myntra ones (Home Depot has none).

**Chosen where the source says nothing** (documented here, not measured): prices are a Myntra price of
the group (INR; Home Depot rows take any Myntra price: its source has none) times ``exp(N(0, 0.1))``,
rounded to end in 9, with the source row's discount; ``availability`` is ``IN_STOCK`` 88%,
``OUT_OF_STOCK`` 7%, ``BACKORDER`` 3%, ``PREORDER`` 2% (a retailer's typical share of unsellable
listings); sizes are XS-XXL for apparel (8/20/28/24/14/6%), UK 6-11 for footwear, the title's first
measure for Home Depot (``12 in.``, ``1-gal.``), none otherwise.

**Queries** (``queries.txt``, one a line): drawn from products of the catalog, the bench's fashion mix
for Myntra-style products (``bench/bench_search.fashion_queries``: 40% colour + type, 30% brand + type,
30% the title's first three words) and, for Home Depot-style ones, a mix shaped like
``homedepot/queries_dev.txt`` (short product-type phrases, some with a brand or finish, some
misspelt: 40% type, 20% brand + type, 15% finish + type, 25% one typo in the type's last word), lower
case.

**Size.** Products are made in batches of :data:`BATCH` with numpy and polars (no Python loop over
products) and streamed into one Parquet file, a row group a batch, so memory stays that of one batch
plus the ~99k-row template pool whatever N. Batch ``b`` draws from ``default_rng([seed, 0, b])``: the
same N and seed give a byte-identical file (measured, 2 shared cores: 100k products in 1.7 s, 1M in
5.6 s, peak RSS 0.43 GB at both). The tenant is imported with
:func:`aisle.catalog.importer.import_catalog` (a catalog version written directly, as the demo tenants
are) rather than through the change log (``CatalogWriter.import_file``), which plans one Python
operation object per product before a compaction folds them into a version: at 100k products its log
write alone took 3.2 s and 566 MB against 0.8 s for the direct write, and it grows with N.

A description comes from another product of the same type, so it may name another colour or brand
than the title: the text is in the source's style, not about this product.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from aisle.core.progress import ProgressLine
from aisle.core.stock import AVAILABILITY_FIELD, Availability
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, AttributeRole
from aisle.demo.scale_source import SourcePool

Progress = Callable[[str, int, int], None]
BATCH = 50_000
AVAILABILITY = [a.value for a in (Availability.IN_STOCK, Availability.OUT_OF_STOCK,
                                  Availability.BACKORDER, Availability.PREORDER)]  # fmt: skip
AVAILABILITY_SHARE = [0.88, 0.07, 0.03, 0.02]
APPAREL_SIZES = ["XS", "S", "M", "L", "XL", "XXL"]
APPAREL_SHARE = [0.08, 0.20, 0.28, 0.24, 0.14, 0.06]
SHOE_SIZES = [f"UK {n}" for n in range(6, 12)]
HOME = "Home Improvement"
_STR = [
    "id", "name", "brand", "colour", "gender", "master_category", "sub_category", "article_type",
    "season", "usage", "size", "availability", "description_html",
]  # fmt: skip
SCHEMA = pa.schema(
    [pa.field(c, pa.string()) for c in _STR]
    + [
        pa.field("price", pa.float64()),
        pa.field("discounted_price", pa.float64()),
        pa.field("year", pa.int64()),
    ]
)
"""The catalog file's columns (as the fashion tenant's source file names them, plus size and
availability)."""


class EtaLine(ProgressLine):
    """:class:`ProgressLine` with the time left, from the rate so far: ``generate 300000/1000000 30%
    12.0s eta 28s``."""

    def __call__(self, stage: str, done: int, total: int) -> None:
        spent = time.perf_counter() - self.start
        eta = f"eta {spent * (total - done) / done:4.0f}s" if 0 < done < total else ""
        pct = f"{100 * done // total:3d}%" if total else ""
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{self.label}: {stage:<8} {done:>8}/{total:<8} {pct} {spent:6.1f}s {eta}{end}")
        sys.stderr.flush()


@dataclass(frozen=True)
class ScaleFiles:
    """What :func:`write_scale_catalog` wrote: the catalog, the queries, and how many of each."""

    catalog: Path
    queries: Path
    products: int
    query_count: int


def _within_group(pool: SourcePool, template: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A row drawn uniformly from each template's group."""
    group = pool.group[template]
    offset = (rng.random(template.size) * pool.group_count[group]).astype(np.int64)
    return pool.group_start[group] + offset


def _prices(
    pool: SourcePool, template: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(price, discounted price) of each product: a group price jittered, ending in 9 (module doc)."""
    row = _within_group(pool, template, rng)
    base = pool.rows["price"].to_numpy()[row]
    missing = ~(base > 0)  # Home Depot rows (no price) and free Myntra rows
    base[missing] = pool.fashion_prices[rng.integers(0, pool.fashion_prices.size, int(missing.sum()))]
    price = np.maximum(np.round(base * np.exp(rng.normal(0.0, 0.1, template.size)) / 10) * 10 - 1, 9.0)
    discount = pool.rows["discount"].to_numpy()[row]
    return price, np.maximum(np.round(price * discount), 1.0)


def generate_batch(pool: SourcePool, first: int, count: int, seed: int, batch: int = BATCH) -> pl.DataFrame:
    """Products ``first`` .. ``first + count - 1`` of the catalog (the columns of :data:`SCHEMA`).

    Deterministic in (``seed``, ``first // batch``); ``first`` is a multiple of ``batch``."""
    rng = np.random.default_rng([seed, 0, first // batch])
    template = rng.integers(0, pool.size, count)
    brand_row, colour_row = _within_group(pool, template, rng), _within_group(pool, template, rng)
    text_row = _within_group(pool, template, rng)
    price, discounted = _prices(pool, template, rng)
    availability = rng.choice(len(AVAILABILITY), count, p=AVAILABILITY_SHARE)
    apparel = rng.choice(len(APPAREL_SIZES), count, p=APPAREL_SHARE)
    shoe = rng.integers(0, len(SHOE_SIZES), count)
    rows = pool.rows
    frame = rows.select(pl.all().exclude("brand", "description_html")).gather(template)
    other_colour = rows["colour"].gather(colour_row)
    frame = frame.with_columns(
        id=pl.format("S{}", pl.int_range(first, first + count, dtype=pl.Int64).cast(pl.Utf8).str.zfill(8)),
        brand=rows["brand"].gather(brand_row),
        new_colour=other_colour,
        description_html=rows["description_html"].gather(text_row),
        price=pl.Series(price),
        discounted_price=pl.Series(discounted),
        availability=pl.Series(AVAILABILITY, dtype=pl.Utf8).gather(availability),
        apparel=pl.Series(APPAREL_SIZES, dtype=pl.Utf8).gather(apparel),
        shoe=pl.Series(SHOE_SIZES, dtype=pl.Utf8).gather(shoe),
    )
    swapped = pl.col("slotted") & pl.col("new_colour").is_not_null()
    colour = pl.when(swapped).then(pl.col("new_colour")).otherwise(pl.col("colour"))
    size = (
        pl.when(pl.col("master_category") == "Apparel")
        .then(pl.col("apparel"))
        .when(pl.col("master_category") == "Footwear")
        .then(pl.col("shoe"))
        .otherwise(pl.col("size"))
    )
    frame = frame.with_columns(colour=colour, size=size)
    title = pl.concat_str(
        [
            pl.col("brand").fill_null(""),
            pl.lit(" "),
            pl.col("pre"),
            pl.when(pl.col("slotted")).then(pl.col("colour")).otherwise(pl.lit("")),
            pl.col("post"),
        ]
    ).str.strip_chars()
    return frame.with_columns(name=title).select(SCHEMA.names)


def write_scale_catalog(
    pool: SourcePool,
    out: Path,
    products: int,
    *,
    seed: int = 42,
    queries: int = 1000,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> ScaleFiles:
    """Write ``out/catalog.parquet`` (``products`` rows, a row group a ``batch``) and ``out/queries.txt``
    (``queries`` lines, fewer for a catalog smaller than that), deterministic in ``seed`` and ``batch``."""
    from aisle.demo.scale_queries import query_mix

    out.mkdir(parents=True, exist_ok=True)
    catalog, query_file = out / "catalog.parquet", out / "queries.txt"
    wanted = np.sort(np.random.default_rng([seed, 1]).choice(products, min(queries, products), replace=False))
    sampled: list[pl.DataFrame] = []
    with pq.ParquetWriter(catalog, SCHEMA, compression="zstd") as writer:
        for first in range(0, products, batch):
            count = min(batch, products - first)
            frame = generate_batch(pool, first, count, seed, batch)
            writer.write_table(frame.to_arrow().cast(SCHEMA), row_group_size=batch)
            picked = wanted[(wanted >= first) & (wanted < first + count)] - first
            sampled.append(frame.select("name", "brand", "colour", "article_type", "master_category")[picked])
            if progress:
                progress("generate", first + count, products)
    lines = query_mix(pl.concat(sampled), np.random.default_rng([seed, 2]), home=HOME)
    query_file.write_text("".join(f"{q}\n" for q in lines))
    return ScaleFiles(catalog, query_file, products, len(lines))


def scale_configs() -> dict[str, BaseModel]:
    """The tenant's five files: the fashion tenant's, plus ``size`` and ``availability`` keywords
    (filterable, facetable) and its own display name."""
    from aisle.catalog.datasets import fashion

    files = fashion.configs()
    attrs = files["attribute_configuration.json"]
    assert isinstance(attrs, AttributeConfiguration)
    extra = [
        Attribute(name="size", role=AttributeRole.size, filterable=True, facetable=True),
        Attribute(name=AVAILABILITY_FIELD, filterable=True, facetable=True),
    ]
    files["attribute_configuration.json"] = AttributeConfiguration(attributes=[*attrs.attributes, *extra])
    global_ = files["global_configuration.json"]
    files["global_configuration.json"] = global_.model_copy(update={"display_name": "Scale (synthetic)"})
    return files


def import_scale(
    tenants: Tenants, tenant: str, catalog: Path, index_dir: Path, progress: Progress | None = None
) -> int:
    """Write the tenant's files, import ``catalog`` as its new version and build its search index under
    ``index_dir``; returns the products imported. Raises AisleError (an import that fails)."""
    from aisle.catalog.importer import import_catalog
    from aisle.search.indexes import IndexRegistry

    tenants.write_config(tenant, scale_configs())
    report, _ = import_catalog(tenants, tenant, catalog, progress=progress)
    IndexRegistry(tenants, index_dir).get(tenant, progress=progress)
    return report.imported
