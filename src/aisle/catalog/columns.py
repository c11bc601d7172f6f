"""A catalog file's columns as :mod:`aisle.catalog.inference` sees them: a profile of each column's
values, the id column, and which column holds which role (title, price, brand...).

See :mod:`aisle.catalog.inference` for the rules; this module measures and names, it builds no
attribute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from aisle.catalog.schema import PATH_SEP
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenant_config import AttributeRole

MAX_FACET_VALUES = 100
"""A keyword field with more distinct values than this is not offered as a facet."""
MOSTLY = 0.95
"""A column is numeric when this share of its values are numbers, and the id when this share of rows
have one: the rest are bad rows the import reports (a stray 'n/a' does not turn a price into text)."""
MAX_INTEGER_DIGITS = 15
"""Longer runs of digits (EANs, ISBN-13s are 13; card-like codes more) stay exact: float64 holds 15."""

ID_NAMES = ("id", "product_id", "item_id", "sku", "productid", "itemid", "product_code", "item_code",
            "article_id", "asin", "isbn", "ean", "upc", "gtin", "code")  # fmt: skip
ROLE_NAMES: dict[AttributeRole, tuple[str, ...]] = {
    AttributeRole.price: ("price", "sale_price", "current_price", "list_price", "retail_price",
                          "unit_price", "msrp", "amount", "cost"),
    AttributeRole.brand: ("brand", "brand_name", "manufacturer", "maker", "make", "vendor", "producer",
                          "winery", "publisher", "label", "designer"),
    AttributeRole.color: ("color", "colour", "colors", "colours", "base_color", "base_colour"),
    AttributeRole.category: ("category", "categories", "category_path", "product_category",
                             "product_type", "department", "genre", "section", "breadcrumb", "type"),
    AttributeRole.gender: ("gender", "sex"),
    AttributeRole.size: ("size", "sizes"),
    AttributeRole.image: ("image", "image_url", "image_link", "imageurl", "img", "picture", "photo",
                          "thumbnail"),
    AttributeRole.description: ("description", "desc", "details", "summary", "long_description",
                                "short_description", "body", "about"),
    AttributeRole.title: ("title", "name", "product_name", "product_title", "item_name", "item_title",
                          "productname"),
}  # fmt: skip
"""Column names of each role, best first; a name holding the word (``red_wine_price``) comes after them.
Roles are given in this order, so ``brand_name`` is a brand before it could be a title."""
ROLE_WORDS: dict[AttributeRole, tuple[str, ...]] = {
    AttributeRole.price: ("price",),
    AttributeRole.brand: ("brand",),
    AttributeRole.color: ("color", "colour"),
    AttributeRole.category: ("category",),
    AttributeRole.size: ("size",),
    AttributeRole.image: ("image", "img", "photo", "thumbnail"),
    AttributeRole.description: ("description",),
    AttributeRole.title: ("title", "name"),
}
_IMAGE_URL = r"(?i)^https?://\S+\.(jpe?g|png|gif|webp|avif)(\?\S*)?$"
_URL = r"(?i)^https?://\S+$"
_HTML_TAG = r"</?[a-zA-Z][a-zA-Z0-9]*(\s[^<>]*)?/?>"
_INTEGER = r"^[+-]?\d+$"
_LEADING_ZERO = r"^[+-]?0\d"
_TRUE_FALSE = {"true", "false", "yes", "no"}
_ZERO_ONE = {"0", "1"}


@dataclass(frozen=True)
class ColumnProfile:
    """What the values of one column look like (filled: non-blank values; shares are of those)."""

    column: str
    rows: int
    filled: int
    distinct: int
    kind: str  # boolean | integer | number | code | string
    avg_length: float
    avg_words: float
    path_share: float
    image_share: float
    url_share: float
    json_share: float
    zero_one: bool = False
    html_share: float = 0.0

    @property
    def few_values(self) -> bool:
        """At most :data:`MAX_FACET_VALUES` distinct values, each shared by two rows on average."""
        return 2 <= self.distinct <= MAX_FACET_VALUES and self.distinct * 2 <= self.filled


def profile(frame: pl.DataFrame, column: str) -> ColumnProfile:
    """The :class:`ColumnProfile` of ``frame[column]`` (a Utf8 column; blank values count as missing)."""
    values = frame.get_column(column).cast(pl.Utf8).str.strip_chars()
    filled = values.filter(values.is_not_null() & (values != ""))
    n = filled.len()
    if n == 0:
        return ColumnProfile(column, frame.height, 0, 0, "string", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def share(mask: pl.Series) -> float:
        return float(mask.sum()) / n

    lowered = set(filled.str.to_lowercase().unique().to_list())
    numbers = filled.cast(pl.Float64, strict=False)
    integer = filled.str.contains(_INTEGER)
    leading_zero = bool(filled.str.contains(_LEADING_ZERO).any())
    digits = _stat(filled.filter(integer).str.replace(r"^[+-]", "").str.len_chars().max())
    if lowered <= _TRUE_FALSE | _ZERO_ONE and lowered & _TRUE_FALSE:
        kind = "boolean"
    elif integer.all() and (leading_zero or digits > MAX_INTEGER_DIGITS):
        kind = "code"
    elif leading_zero or digits > MAX_INTEGER_DIGITS:
        kind = "string"
    elif share(integer) >= MOSTLY:
        kind = "integer"
    elif share(numbers.is_not_null() & numbers.is_finite()) >= MOSTLY:
        kind = "number"
    else:
        kind = "string"
    return ColumnProfile(
        column=column,
        rows=frame.height,
        filled=n,
        distinct=filled.n_unique(),
        kind=kind,
        avg_length=_stat(filled.str.len_chars().mean()),
        avg_words=_stat(filled.str.count_matches(r"\S+").mean()),
        path_share=share(filled.str.contains(PATH_SEP, literal=True)),
        image_share=share(filled.str.contains(_IMAGE_URL)),
        url_share=share(filled.str.contains(_URL)),
        json_share=share(filled.str.starts_with("[") | filled.str.starts_with("{")),
        zero_one=lowered <= _ZERO_ONE,
        html_share=share(filled.str.contains(_HTML_TAG)),
    )


def _stat(value: object) -> float:
    """A polars aggregate as a float (0 when null)."""
    return float(value) if isinstance(value, int | float) else 0.0


def attribute_name(column: str) -> str:
    """A valid attribute name for ``column``: lowercase letters, digits and ``_`` (``Unit Price (€)`` ->
    ``unit_price``), starting with a letter, at most 64 characters."""
    name = re.sub(r"[^a-z0-9]+", "_", column.lower()).strip("_")
    if not name:
        name = "field"
    if not name[0].isalpha():
        name = "f_" + name
    return name[:64].rstrip("_")


def _words(name: str) -> set[str]:
    return set(name.split("_"))


def is_flag(p: ColumnProfile, name: str) -> bool:
    """Whether the column is a yes/no field: true/false/yes/no values, or only 0 and 1 in a column named
    ``is_*``, ``has_*``, ``in_*``, ``on_*`` or ``can_*``."""
    if p.kind == "boolean":
        return True
    flag_name = name.startswith(("is_", "has_", "in_", "on_", "can_"))
    return flag_name and p.kind == "integer" and p.zero_one


def fits(role: AttributeRole, p: ColumnProfile) -> bool:
    """Whether a column of this profile can hold ``role`` (a price is a number, a brand a word...)."""
    if p.filled == 0:
        return False
    if role is AttributeRole.price:
        return p.kind in ("number", "integer")
    if role is AttributeRole.image:
        return p.kind == "string" and p.url_share >= 0.8
    if role is AttributeRole.size and p.kind in ("code", "integer"):
        return True
    return p.kind == "string" and p.url_share < 0.5 and p.json_share < 0.5


def pick_id(profiles: list[ColumnProfile], override: str | None) -> ColumnProfile:
    """The id column: ``override``, else the first column named like an id (:data:`ID_NAMES`, then
    ``*_id``) whose values are unique and filled in all but a few rows (:data:`MOSTLY`).

    Raises:
        BadRequest (``catalog_id_missing``): ``override`` is not a column, or no column qualifies.
    """
    columns = ", ".join(p.column for p in profiles)
    if override is not None:
        for p in profiles:
            if p.column == override:
                return p
        raise BadRequest(
            f"the file has no id column '{override}' (columns: {columns})", code=ErrorCode.CATALOG_ID_MISSING
        )
    unique = [p for p in profiles if 0 < p.filled >= MOSTLY * p.rows and p.distinct == p.filled]
    for wanted in ID_NAMES:
        for p in unique:
            if attribute_name(p.column) == wanted:
                return p
    for p in unique:
        if attribute_name(p.column).endswith("_id"):
            return p
    raise BadRequest(
        "no column can be the product id: name one with --id-column (idColumn); an id column is named "
        f"like id, sku, product_id or *_id and has a unique value in every row (columns: {columns})",
        code=ErrorCode.CATALOG_ID_MISSING,
    )


def assign_roles(
    profiles: list[ColumnProfile], id_column: str, title_column: str | None
) -> dict[str, tuple[AttributeRole, str]]:
    """``{column: (role, why)}``: each role given to at most one column, the title to one always.

    Raises:
        BadRequest (``catalog_title_missing``): ``title_column`` is not a column, or no column can be
            the title (none holds text).
    """
    roles: dict[str, tuple[AttributeRole, str]] = {}
    by_column = {p.column: p for p in profiles}
    if title_column is not None:
        if title_column not in by_column:
            raise BadRequest(
                f"the file has no title column '{title_column}' (columns: {', '.join(by_column)})",
                code=ErrorCode.CATALOG_TITLE_MISSING,
            )
        roles[title_column] = (AttributeRole.title, "title: chosen with --title-column")
    free = [p for p in profiles if p.column != id_column and p.column not in roles]
    for role, names in ROLE_NAMES.items():
        if role in {r for r, _ in roles.values()}:
            continue
        chosen = _by_name(role, names, [p for p in free if p.column not in roles])
        if chosen is not None:
            roles[chosen[0].column] = (role, chosen[1])
    if AttributeRole.image not in {r for r, _ in roles.values()}:
        for p in free:
            if p.column not in roles and p.image_share >= 0.8:
                roles[p.column] = (AttributeRole.image, "image: its values are links to pictures")
                break
    if AttributeRole.category not in {r for r, _ in roles.values()}:
        for p in free:
            if p.column not in roles and p.kind == "string" and p.path_share >= 0.5:
                roles[p.column] = (
                    AttributeRole.category,
                    f"category: its values are paths ('{PATH_SEP.strip()}')",
                )
                break
    if AttributeRole.title not in {r for r, _ in roles.values()}:
        texts = [
            p for p in free if p.column not in roles and p.kind == "string" and fits(AttributeRole.title, p)
        ]
        if not texts:
            raise BadRequest(
                "no column can be the product title (no column holds text): name one with --title-column "
                "(titleColumn)",
                code=ErrorCode.CATALOG_TITLE_MISSING,
            )
        best = max(texts, key=lambda p: (p.distinct, p.avg_words))
        roles[best.column] = (AttributeRole.title, "title: the text column with the most distinct values")
    return roles


def _by_name(
    role: AttributeRole, names: tuple[str, ...], free: list[ColumnProfile]
) -> tuple[ColumnProfile, str] | None:
    fitting = [p for p in free if fits(role, p)]
    for wanted in names:
        for p in fitting:
            if attribute_name(p.column) == wanted:
                return p, f"{role.value}: named '{p.column}'"
    for word in ROLE_WORDS.get(role, ()):
        for p in fitting:
            if word in _words(attribute_name(p.column)):
                return p, f"{role.value}: its name has '{word}'"
    return None
