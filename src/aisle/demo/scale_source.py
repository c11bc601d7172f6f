"""The vocabulary and distributions :mod:`aisle.demo.scale` recombines: one pool of the demo catalogs' rows.

Each row of the pool is a *template*: a real product split into slots. A Myntra row (44,441) keeps its
brand, colour, article type, gender, usage, season, year, price, discount and description, and its
title without them (``Palm Tree Girls Sp Jace Sko White Skirts`` -> brand ``Palm Tree``, middle
``Girls Sp Jace Sko``, colour ``White``, type ``Skirts``). A Home Depot row (54,667, titles only) has
its brand guessed from the title's first words (the two-word prefix when it follows the first word in at
least half of its titles: ``Hampton Bay``, ``Home Decorators``; else the first word), its finish from
`` in <Capitalised Words>`` (``in Brushed Nickel``; 17% of titles), its size from the first measure
(``12 in.``, ``1-gal.``), its product type from the last two words before `` in``/`` with``/``(``/``,``
and its group (the type's head noun: ``Faucet``, ``Microwave``).

Rows are grouped by type (fashion: article type; Home Depot: head noun), sorted so that a group is one
run of rows (``group_start``, ``group_count``): the generator draws a product's brand, colour, price and
description from rows of its template's group, so a brand's share, a colour's share and the price
distribution follow the source while every product is a new combination.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from aisle.core.errors import AisleError

FASHION = "fashion"
HOMEDEPOT = "homedepot"
_NAN = re.compile(rb":\s*NaN\b")
_CUT = r" in | with | \(|,| - "
_FINISH = r" in ([A-Z][\w-]*(?: [A-Z][\w-]*){0,2})(?:$| with| \(|,)"
_MEASURE = r"(\d+(?:[./-]\d+)?(?:-| )(?:in|ft|gal|oz|lb|qt|sq|cu|Watt|Volt|Amp)\b\.?)"
COLUMNS = [
    "family",
    "brand",
    "pre",
    "colour",
    "post",
    "slotted",
    "article_type",
    "master_category",
    "sub_category",
    "gender",
    "usage",
    "season",
    "year",
    "size",
    "price",
    "discount",
    "description_html",
]


@dataclass(frozen=True)
class SourcePool:
    """The template rows (:data:`COLUMNS`, sorted by group) and where each group's run starts."""

    rows: pl.DataFrame
    group: np.ndarray  # group id of each row (int32)
    group_start: np.ndarray  # first row of each group
    group_count: np.ndarray  # rows in each group
    fashion_prices: np.ndarray  # every Myntra price > 0 (Home Depot's rows draw from these)

    @property
    def size(self) -> int:
        return self.rows.height


def _strip(text: pl.Expr, part: pl.Expr, *, prefix: bool) -> pl.Expr:
    """``text`` without ``part`` at its start (``prefix``) or end, compared case-insensitively."""
    low, n = part.str.to_lowercase(), part.str.len_chars()
    if prefix:
        hit = text.str.to_lowercase().str.starts_with(low) & (n > 0)
        return pl.when(hit).then(text.str.slice(n)).otherwise(text).str.strip_chars()
    hit = text.str.to_lowercase().str.ends_with(low) & (n > 0)
    return pl.when(hit).then(text.str.slice(0, text.str.len_chars() - n)).otherwise(text).str.strip_chars()


def _slot(frame: pl.DataFrame, marker: str) -> pl.DataFrame:
    """Split each title without its brand (``rest``) around its colour: ``pre`` + colour + ``post``.

    The colour is found as a whole word (case-insensitive) after ``marker`` (Home Depot: `` in ``); a
    title without it keeps ``rest`` as ``pre`` and is not ``slotted`` (its colour cannot be swapped)."""
    pre: list[str] = []
    post: list[str] = []
    slotted: list[bool] = []
    for rest, colour in zip(frame["rest"].to_list(), frame["colour"].to_list(), strict=True):
        at = _find_word(rest, marker + colour) if colour else -1
        start = at + len(marker)
        pre.append(rest if at < 0 else rest[:start])
        post.append("" if at < 0 else rest[start + len(colour) :])
        slotted.append(at >= 0)
    return frame.with_columns(
        pre=pl.Series(pre, dtype=pl.Utf8), post=pl.Series(post, dtype=pl.Utf8), slotted=pl.Series(slotted)
    )


def _find_word(text: str, word: str) -> int:
    """Where ``word`` first occurs in ``text`` as whole words, case-insensitively; -1 if nowhere."""
    low, target = text.lower(), word.lower()
    at = low.find(target)
    while at >= 0:
        end = at + len(target)
        if (at == 0 or not low[at - 1].isalnum()) and (end == len(low) or not low[end].isalnum()):
            return at
        at = low.find(target, at + 1)
    return -1


def _fashion(path: Path) -> pl.DataFrame:
    """Myntra rows as templates (``NaN`` in the file read as null; rows without a type or name dropped)."""
    frame = pl.read_ndjson(_NAN.sub(b": null", gzip.decompress(path.read_bytes())))
    frame = frame.filter(pl.col("name").is_not_null() & pl.col("article_type").is_not_null())
    name, kind = pl.col("name").str.replace_all(r"\s+", " "), pl.col("article_type")
    rest = _strip(name, pl.col("brand").fill_null(""), prefix=True)
    price = pl.col("price").cast(pl.Float64)
    frame = frame.select(
        family=pl.lit(FASHION),
        brand=pl.col("brand"),
        rest=rest,
        colour=pl.col("colour"),
        article_type=kind,
        master_category=pl.col("master_category"),
        sub_category=pl.col("sub_category"),
        gender=pl.col("gender"),
        usage=pl.col("usage"),
        season=pl.col("season"),
        year=pl.col("year").cast(pl.Int64),
        size=pl.lit(None, dtype=pl.Utf8),
        price=price,
        discount=(pl.col("discounted_price").cast(pl.Float64) / price)
        .fill_nan(1.0)
        .fill_null(1.0)
        .clip(0, 1),
        description_html=pl.col("description_html"),
        title=pl.col("name"),
        group=kind,
    )
    return _slot(frame, "")


def _homedepot(path: Path) -> pl.DataFrame:
    """Home Depot rows as templates: brand, finish, size and type guessed from the title (module doc)."""
    frame = pl.read_csv(path, schema_overrides={"id": pl.Utf8, "title": pl.Utf8}).drop_nulls("title")
    words = pl.col("title").str.split(" ")
    frame = frame.with_columns(w1=words.list.get(0), w2=words.list.slice(0, 2).list.join(" "))
    first = frame["w1"].value_counts(name="n1")
    pair = frame["w2"].value_counts(name="n2")
    frame = frame.join(first, on="w1", how="left").join(pair, on="w2", how="left")
    brand = pl.when((pl.col("n2") * 2 >= pl.col("n1")) & (pl.col("w2") != pl.col("w1")))
    frame = frame.with_columns(brand=brand.then(pl.col("w2")).otherwise(pl.col("w1")))
    rest = pl.col("title").str.strip_prefix(pl.col("brand")).str.strip_chars()
    finish = pl.col("title").str.extract(_FINISH, 1)
    kind_words = rest.str.replace(f"(?:{_CUT}).*$", "").str.split(" ").list.tail(2)
    frame = frame.with_columns(rest=rest, finish=finish, kind=kind_words.list.join(" "))
    noun = pl.col("kind").str.split(" ").list.last()
    frame = frame.select(
        family=pl.lit(HOMEDEPOT),
        brand=pl.col("brand"),
        rest=pl.col("rest"),
        colour=pl.col("finish"),
        article_type=pl.col("kind"),
        master_category=pl.lit("Home Improvement"),
        sub_category=noun,
        gender=pl.lit(None, dtype=pl.Utf8),
        usage=pl.lit(None, dtype=pl.Utf8),
        season=pl.lit(None, dtype=pl.Utf8),
        year=pl.lit(None, dtype=pl.Int64),
        size=pl.col("title").str.extract(_MEASURE, 1),
        price=pl.lit(None, dtype=pl.Float64),
        discount=pl.lit(1.0),
        description_html=pl.lit(None, dtype=pl.Utf8),
        title=pl.col("title"),
        group=noun,
    ).filter(pl.col("sub_category").str.contains(r"^[A-Z]"))  # a noun, not "and" or "x"
    return _slot(frame, " in ")


def load_source(data: Path) -> SourcePool:
    """The template pool from ``data/fashion/products.jsonl.gz`` and ``data/homedepot/products.csv``.

    Raises: AisleError when neither file exists."""
    parts = []
    fashion, homedepot = data / "fashion" / "products.jsonl.gz", data / "homedepot" / "products.csv"
    if fashion.exists():
        parts.append(_fashion(fashion))
    if homedepot.exists():
        parts.append(_homedepot(homedepot))
    if not parts:
        raise AisleError(f"no demo catalog under {data} (fashion/products.jsonl.gz, homedepot/products.csv)")
    rows = pl.concat(parts, how="vertical_relaxed")
    # group key per family, sorted so each group is one run; stable on the source order (deterministic)
    rows = rows.with_columns(key=pl.col("family") + "/" + pl.col("group")).sort("key", maintain_order=True)
    keys = rows["key"]
    group = keys.rle_id().to_numpy().astype(np.int32)
    counts = np.bincount(group)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    prices = rows.filter((pl.col("family") == FASHION) & (pl.col("price") > 0))["price"].to_numpy()
    if prices.size == 0:
        prices = np.array([499.0, 999.0, 1499.0, 2499.0])  # Home Depot alone: no price in its source
    return SourcePool(rows.select(COLUMNS), group, starts, counts, prices)
