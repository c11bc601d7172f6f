"""What a search worker needs of a catalog version besides its tantivy index and rows, written once
beside the index and mapped by every worker of the host (issue 42).

Opening a tenant's index used to read the whole catalog version into each worker and derive from it,
in each worker's own heap: the product ids and the id lookup, the keyword spellings, the speller's
vocabulary, the attribute dictionary's value counts, the price buckets and the searchable text columns
(at 300,000 generated products about 120 MiB a worker, plus what polars' allocator kept of the
catalog). Now the first process to open an index directory derives them once into
``<index dir>/serving-v1/`` (:mod:`aisle.core.mapped`, under the index's host lock), and every worker
maps the large parts and reads the small ones; no worker reads the catalog to open an index that has
its tables:

- ``ids`` (strings) and ``id_slots`` (:class:`~aisle.core.id_lookup.IdLookup`): mapped;
- ``searchable.arrow``: the searchable attributes' columns as an uncompressed Arrow IPC file, mapped by
  pyarrow and wrapped by polars without a copy (string views);
- ``meta.json``: keyword spellings, price buckets, the speller's vocabulary and the extractable
  attributes' value counts (kilobytes to a few megabytes, read into memory).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc

from aisle.catalog.schema import PATH_SEP
from aisle.core.id_lookup import IdLookup, build_slots
from aisle.core.mapped import MappedTables, write_tables
from aisle.core.tenant_config import AttributeConfiguration, AttributeRole, AttributeType
from aisle.search.index.schema import keyword_field
from aisle.search.spelling import catalog_vocabulary

TABLES_DIR = "serving-v1"
SEARCHABLE_FILE = "searchable.arrow"


def _nice(x: float) -> float:
    """Round to 1, 2 or 5 times a power of ten (for readable price buckets)."""
    if x <= 0:
        return 0.0
    exp = math.floor(math.log10(x))
    base = 10**exp
    for m in (1, 2, 5, 10):
        if x <= m * base:
            return float(m * base)
    return float(10 * base)


def price_buckets(prices: pl.Series, buckets: int = 5) -> list[tuple[float | None, float | None]]:
    """Range-facet boundaries at rounded quantiles of the catalog's prices: [(from, to), ...]."""
    clean = prices.drop_nulls()
    if clean.len() == 0:
        return []
    edges: list[float] = []
    for q in range(1, buckets):
        edge = _nice(float(clean.quantile(q / buckets) or 0.0))
        if edge > 0 and (not edges or edge > edges[-1]):
            edges.append(edge)
    ranges: list[tuple[float | None, float | None]] = []
    lo: float | None = None
    for edge in edges:
        ranges.append((lo, edge))
        lo = edge
    ranges.append((lo, None))
    return ranges


@dataclass(frozen=True)
class ServingTables:
    """One catalog version's serving tables (see the module). ``searchable``: one Series per searchable
    attribute present in the catalog, in configuration order; ``value_counts``: per extractable
    attribute, value -> products holding it."""

    ids: Sequence[str]
    ord_by_id: Mapping[str, int]
    keyword_values: dict[str, dict[str, list[str]]]
    price_ranges: list[tuple[float | None, float | None]]
    searchable: list[pl.Series]
    vocabulary: dict[str, int]
    value_counts: dict[str, dict[Any, int]]


def keyword_spellings(
    products: pl.DataFrame, config: AttributeConfiguration
) -> dict[str, dict[str, list[str]]]:
    """Per keyword attribute, each lowercased value -> every spelling the catalog uses for it (sorted);
    a category path's ancestors count as values."""
    keyword_values: dict[str, dict[str, list[str]]] = {}
    for attr in config.attributes:
        if keyword_field(attr) and attr.name in products.columns:
            values = set(products[attr.name].drop_nulls().unique().to_list())
            if attr.type is AttributeType.category_path:
                for v in list(values):
                    parts = v.split(PATH_SEP)
                    values.update(PATH_SEP.join(parts[:level]) for level in range(1, len(parts)))
            lookup: dict[str, list[str]] = {}
            for v in sorted(values):
                lookup.setdefault(v.lower(), []).append(v)
            keyword_values[attr.name] = lookup
    return keyword_values


def _derived(products: pl.DataFrame, config: AttributeConfiguration) -> dict[str, Any]:
    """The small tables of ``products`` (``meta.json``'s content): searchable column names, keyword
    spellings, price buckets, the speller's vocabulary, value counts as ``[value, count]`` pairs."""
    price_attr = config.by_role(AttributeRole.price)
    names = [a.name for a in config.attributes if a.searchable and a.name in products.columns]
    return {
        "searchable": names,
        "keyword_values": keyword_spellings(products, config),
        "price_ranges": (
            [list(r) for r in price_buckets(products[price_attr.name])]
            if price_attr is not None and price_attr.name in products.columns
            else []
        ),
        "vocabulary": catalog_vocabulary(products[n] for n in names),
        "value_counts": {
            a.name: _value_counts(products[a.name])
            for a in config.attributes
            if a.extractable and a.name in products.columns
        },
    }


def _value_counts(column: pl.Series) -> list[list[Any]]:
    """``[value, products]`` pairs of ``column``, most frequent first, ties by value (a fixed order)."""
    counts = column.drop_nulls().value_counts(name="n")
    return [list(pair) for pair in counts.sort(["n", column.name], descending=[True, False]).iter_rows()]


def _tables(
    meta: dict[str, Any], ids: Sequence[str], ord_by_id: Mapping[str, int], frame: pl.DataFrame
) -> ServingTables:
    return ServingTables(
        ids=ids,
        ord_by_id=ord_by_id,
        keyword_values=meta["keyword_values"],
        price_ranges=[(lo, hi) for lo, hi in meta["price_ranges"]],
        searchable=[frame[name] for name in meta["searchable"]],
        vocabulary=meta["vocabulary"],
        value_counts={name: {v: c for v, c in pairs} for name, pairs in meta["value_counts"].items()},
    )


def write_serving_tables(dest: Path, products: pl.DataFrame, config: AttributeConfiguration) -> None:
    """Derive the tables of ``products`` under ``config`` into directory ``dest``, at once or not at all.

    Raises:
        OSError: the disk is full or read-only.
    """
    ids = products["id"].to_list()
    with write_tables(dest) as writer:
        writer.strings("ids", ids)
        writer.array("id_slots", build_slots(ids))
        del ids
        writer.meta.update(_derived(products, config))
        searchable = products.select(writer.meta["searchable"])
        searchable.write_ipc(writer.tmp / SEARCHABLE_FILE, compression="uncompressed")


def memory_tables(products: pl.DataFrame, config: AttributeConfiguration) -> ServingTables:
    """The same tables held in this process's memory (where they cannot be written beside the index)."""
    ids = products["id"].to_list()
    return _tables(_derived(products, config), ids, {pid: i for i, pid in enumerate(ids)}, products)


def load_serving_tables(dest: Path) -> ServingTables | None:
    """The tables in ``dest``, the large ones mapped; None when there are none (or not all of them).
    Raises OSError (unreadable files)."""
    tables = MappedTables.open(dest)
    if tables is None:
        return None
    ids = tables.strings("ids")
    frame = pl.from_arrow(ipc.open_file(pa.memory_map(str(dest / SEARCHABLE_FILE))).read_all())
    assert isinstance(frame, pl.DataFrame)
    return _tables(tables.meta, ids, IdLookup(ids, tables.array("id_slots")), frame)
