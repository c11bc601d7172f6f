"""Map a raw all-string frame onto the tenant's attribute configuration.

Output: one column per attribute, typed (Utf8 / Float64 / Int64 / Boolean), plus ``id`` (Utf8).
``category_path`` attributes join their source columns, top level first, with :data:`PATH_SEP`.
"""

from __future__ import annotations

import html

import polars as pl

from aisle.catalog.readers import BadRow
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenant_config import Attribute, AttributeConfiguration, AttributeType

PATH_SEP = " > "
_TAG = r"<[^>]*>"
_WS = r"\s{2,}|[^\S ]"
r"""White space to fold into one space: runs, and any single character of it but a space (the same text
as replacing ``\s+``, with far fewer replacements: most white space is one space already)."""


def strip_html(col: pl.Expr) -> pl.Expr:
    """Remove tags and fold white space (vectorised); entities are unescaped apart
    (:func:`unescape_entities`: only the rows holding one)."""
    return col.str.replace_all(_TAG, " ").str.replace_all(_WS, " ").str.strip_chars()


def unescape_entities(column: pl.Series) -> pl.Series:
    """``column`` with HTML entities unescaped (``html.unescape``) in the rows holding an ``&``, the
    others untouched: a ``map_elements`` over every row cost 8 s of fashion's 44k descriptions."""
    rows = column.str.contains("&", literal=True).fill_null(False).arg_true()
    if rows.len() == 0:
        return column
    fixed = pl.Series([html.unescape(v) for v in column.gather(rows).to_list()], dtype=pl.Utf8)
    return column.scatter(rows, fixed)


def _clean_text(col: pl.Expr) -> pl.Expr:
    text = col.str.strip_chars()
    return pl.when(text == "").then(None).otherwise(text)


def _source_expr(attr: Attribute, columns: set[str]) -> pl.Expr:
    missing = [s for s in attr.sources if s not in columns]
    if attr.type is AttributeType.category_path:
        present = [_clean_text(pl.col(s)) for s in attr.sources if s in columns]
        if not present:
            return pl.lit(None, dtype=pl.Utf8)
        return pl.concat_str(present, separator=PATH_SEP, ignore_nulls=True).replace("", None)
    if missing:
        return pl.lit(None, dtype=pl.Utf8)
    return pl.col(attr.sources[0])


def map_catalog(raw: pl.DataFrame, config: AttributeConfiguration) -> tuple[pl.DataFrame, list[BadRow]]:
    """Typed product frame and the rows rejected (with line numbers and reasons).

    A row is rejected when its id is missing or repeated, or when a numeric or boolean field holds
    a value that does not parse. Columns of the configuration absent from the file stay null.

    Raises:
        BadRequest: the id column is missing from the file.
    """
    columns = set(raw.columns)
    if config.id_source not in columns:
        found = ", ".join(sorted(columns - {"_line"}))
        raise BadRequest(
            f"the file has no id column '{config.id_source}' (columns: {found})",
            code=ErrorCode.CATALOG_ID_MISSING,
        )
    exprs: list[pl.Expr] = [_clean_text(pl.col(config.id_source)).alias("id"), pl.col("_line")]
    checks: list[tuple[str, pl.Expr]] = []
    for attr in config.attributes:
        src = _source_expr(attr, columns)
        if attr.type in (AttributeType.text, AttributeType.keyword, AttributeType.category_path):
            value = strip_html(src) if attr.html else src
            exprs.append(_clean_text(value).alias(attr.name))
        elif attr.type in (AttributeType.number, AttributeType.integer):
            text = _clean_text(src)
            dtype = pl.Float64 if attr.type is AttributeType.number else pl.Int64
            parsed = text.cast(pl.Float64, strict=False)
            if attr.type is AttributeType.integer:
                parsed = pl.when(parsed == parsed.round(0)).then(parsed).otherwise(None)
            exprs.append(parsed.cast(dtype).alias(attr.name))
            checks.append(
                (f"field '{attr.name}' is not a {attr.type.value}", text.is_not_null() & parsed.is_null())
            )
            if attr.role is not None and attr.role.value == "price":
                checks.append((f"field '{attr.name}' is negative", parsed < 0))
        elif attr.type is AttributeType.boolean:
            text = _clean_text(src).str.to_lowercase()
            parsed = text.replace_strict(
                ["true", "1", "yes", "false", "0", "no"],
                [True, True, True, False, False, False],
                default=None,
                return_dtype=pl.Boolean,
            )
            exprs.append(parsed.alias(attr.name))
            checks.append((f"field '{attr.name}' is not a boolean", text.is_not_null() & parsed.is_null()))
    typed = raw.select(*exprs, *[cond.alias(f"_c{i}") for i, (_, cond) in enumerate(checks)])
    for attr in config.attributes:
        if attr.html and attr.type in (
            AttributeType.text,
            AttributeType.keyword,
            AttributeType.category_path,
        ):
            typed = typed.with_columns(
                _clean_text(pl.lit(unescape_entities(typed[attr.name]))).alias(attr.name)
            )
    reasons = [pl.when(pl.col("id").is_null()).then(pl.lit("missing id")).otherwise(None)]
    reasons += [
        pl.when(pl.col(f"_c{i}")).then(pl.lit(msg)).otherwise(None) for i, (msg, _) in enumerate(checks)
    ]
    typed = typed.with_columns(pl.coalesce(reasons).alias("_reason")).drop(
        [f"_c{i}" for i in range(len(checks))]
    )
    dup = typed["id"].is_duplicated() & ~typed["id"].is_first_distinct() & typed["_reason"].is_null()
    typed = typed.with_columns(
        pl.when(dup).then(pl.lit("duplicate id (first kept)")).otherwise(pl.col("_reason")).alias("_reason")
    )
    rejected = typed.filter(pl.col("_reason").is_not_null()).select("_line", "_reason")
    bad = [BadRow(int(line), str(reason)) for line, reason in rejected.iter_rows()]
    products = typed.filter(pl.col("_reason").is_null()).drop("_line", "_reason")
    return products, bad
