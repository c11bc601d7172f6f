"""Infer a tenant's attribute configuration from a catalog file's columns (``aisle tenant create``).

Pure: an all-string frame in (what :mod:`aisle.catalog.readers` reads: CSV, NDJSON, Parquet), an
:class:`Inference` out, with one :class:`InferredColumn` per column saying what it became and why.

What is decided, per column, from its name and its values:

- **the id**: a column named like an id (``id``, ``sku``, ``product_id``, ``isbn``...) or, failing that,
  one ending in ``_id``, whose values are unique and filled in 95% of the rows or more (the others are
  bad rows); ``id_column`` overrides;
- **the type**: ``boolean`` (only true/false/yes/no, or 0/1 in an ``is_``/``has_`` column), ``integer``
  (whole numbers up to 15 digits, no leading zero: a leading zero or a longer run is a code, kept as
  text), ``number`` (finite decimals; for both, 95% of the values suffice, the others are bad rows),
  ``category_path`` (most values hold levels joined with ``" > "``,
  :data:`~aisle.catalog.schema.PATH_SEP`), ``text`` (prose: over 4 words or 40 characters on average),
  else ``keyword``;
- **the role** (title, price, brand, color, category, gender, size, image, description) from the
  column's name (``winery`` is a brand, ``colour`` a color, ``sale_price`` a price); an image is also
  recognised from its values (links ending in .jpg, .png...). A role's attribute takes the role's name
  (``winery`` becomes ``brand``, read from ``winery``), as the demo tenants' do; the title falls back
  to the string column with the most distinct values, ``title_column`` overrides;
- **what it is for**: text and keyword fields are searchable (the title weighs 3, brand 2, color 1.5;
  descriptions are kept but not searched, as the fashion tenant found they match what goes *with* a
  product; HTML tags are stripped from text that has them); a field of few distinct values (at most
  :data:`MAX_FACET_VALUES`, and at most half its filled rows) is filterable and facetable, a brand,
  color, category, gender or size field always (a facet lists its most frequent values); numbers are
  filterable and sortable, the price facetable too (its ranges are derived from the catalog), whole
  numbers when they have few values (a vintage, a star rating: counted value by value); links and
  images are returned only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from aisle.catalog.columns import (
    MAX_FACET_VALUES,
    ColumnProfile,
    assign_roles,
    attribute_name,
    is_flag,
    pick_id,
    profile,
)
from aisle.catalog.schema import PATH_SEP
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenant_config import Attribute, AttributeConfiguration, AttributeRole, AttributeType

MAX_NUMERIC_FACET_VALUES = 20
"""A whole number (not the price) is a facet, counted value by value, with at most this many values."""
SEARCH_WEIGHTS = {AttributeRole.title: 3.0, AttributeRole.brand: 2.0, AttributeRole.color: 1.5}
HTML_SHARE = 0.2
"""A text column where this share of values hold HTML tags has them stripped on import."""
CODE_WORDS = ("isbn", "ean", "upc", "gtin", "sku", "code", "zip", "postcode", "phone")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True)
class InferredColumn:
    """One column's outcome: the attribute it became (None: the id column), and why, in words."""

    column: str
    attribute: Attribute | None
    why: str


@dataclass(frozen=True)
class Inference:
    """The inferred configuration (the id column and the attributes) and, in file order, each column's
    :class:`InferredColumn`; ``currency``: the one ISO 4217 code of a ``currency`` column, if any."""

    configuration: AttributeConfiguration
    columns: list[InferredColumn]
    currency: str | None = None


def infer_attributes(
    frame: pl.DataFrame, *, id_column: str | None = None, title_column: str | None = None
) -> Inference:
    """The attribute configuration a catalog frame suggests (see the module docstring for the rules).

    Args:
        frame: the catalog as :func:`aisle.catalog.readers.read_catalog_file` reads it (all Utf8; its
            ``_line`` column is ignored).
        id_column, title_column: the columns to use as id and title instead of inferring them.

    Raises:
        BadRequest: ``catalog_empty`` (no row), ``catalog_id_missing`` (no id column, or
            ``id_column`` is not one), ``catalog_title_missing`` (no text column, or ``title_column``
            is not a column).
    """
    columns = [c for c in frame.columns if c != "_line"]
    if frame.height == 0 or not columns:
        raise BadRequest("the catalog file holds no product", code=ErrorCode.CATALOG_EMPTY)
    profiles = [profile(frame, c) for c in columns]
    id_profile = pick_id(profiles, id_column)
    roles = assign_roles(profiles, id_profile.column, title_column)
    taken = {"id"} | {role.value for role, _ in roles.values()}
    out: list[InferredColumn] = []
    for p in profiles:
        if p.column == id_profile.column:
            how = "chosen with --id-column" if id_column else "named like an id, unique in every row"
            out.append(InferredColumn(p.column, None, f"product id: {how}"))
            if p.column not in roles:
                continue
        role, role_why = roles.get(p.column, (None, ""))
        name = role.value if role is not None else _unique(attribute_name(p.column), taken)
        attribute, why = _attribute(name, p, role)
        out.append(InferredColumn(p.column, attribute, f"{role_why}; {why}" if role_why else why))
    configuration = AttributeConfiguration(
        id_source=id_profile.column, attributes=[c.attribute for c in out if c.attribute is not None]
    )
    return Inference(configuration, out, _currency(frame, profiles))


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = name[: 64 - len(suffix)] + suffix, n + 1
    taken.add(candidate)
    return candidate


def _currency(frame: pl.DataFrame, profiles: list[ColumnProfile]) -> str | None:
    for p in profiles:
        if attribute_name(p.column) == "currency" and p.distinct == 1:
            value = str(frame.get_column(p.column).drop_nulls().str.strip_chars().first() or "")
            if _CURRENCY.match(value):
                return value
    return None


@dataclass(frozen=True)
class _Field:
    """An attribute's identity: its name, the column it is read from (None: its name), its role."""

    name: str
    source: str | None
    role: AttributeRole | None

    def make(
        self,
        kind: AttributeType,
        *,
        searchable: bool = False,
        weight: float = 1.0,
        filterable: bool = False,
        facetable: bool = False,
        sortable: bool = False,
        html: bool = False,
    ) -> Attribute:
        return Attribute(
            name=self.name,
            source=self.source,
            role=self.role,
            type=kind,
            searchable=searchable,
            weight=weight,
            filterable=filterable,
            facetable=facetable,
            sortable=sortable,
            html=html,
        )


def _attribute(name: str, p: ColumnProfile, role: AttributeRole | None) -> tuple[Attribute, str]:
    """The attribute of column ``p`` named ``name`` (holding ``role``), and why it is configured so."""
    f = _Field(name, p.column if p.column != name else None, role)
    keyword, text = AttributeType.keyword, AttributeType.text
    if role is not None:
        return _role_attribute(f, p, role)
    if p.filled == 0:
        return f.make(keyword), "empty in every row: returned only"
    if is_flag(p, name):
        return f.make(AttributeType.boolean, filterable=True, facetable=True), "yes/no: a filter and facet"
    if p.kind in ("integer", "number"):
        kind = AttributeType.integer if p.kind == "integer" else AttributeType.number
        # value by value for whole numbers; a decimal facet would be counted in the price's ranges
        few = p.kind == "integer" and 2 <= p.distinct <= MAX_NUMERIC_FACET_VALUES
        why = f"{'whole ' if p.kind == 'integer' else ''}numbers: filter ranges and sort"
        why += f"; {p.distinct} values, a facet" if few else ""
        return f.make(kind, filterable=True, sortable=True, facetable=few), why
    if p.kind == "code" or (set(name.split("_")) & set(CODE_WORDS) and p.avg_words <= 1):
        return f.make(keyword, filterable=True), "a code (kept exact): a filter only"
    if p.json_share >= 0.5:
        return f.make(text), "structured (JSON) values: returned only"
    if p.url_share >= 0.5:
        return f.make(keyword), "links: returned only"
    if p.path_share >= 0.5:
        why = f"category paths ('{PATH_SEP.strip()}'): searchable, a filter and facet by level"
        return f.make(AttributeType.category_path, **_facet(p)), why
    if p.avg_words > 4 or p.avg_length > 40:
        return f.make(text, searchable=True, html=_html(p)), "prose: searchable text" + _html_why(p)
    if p.distinct == 1:
        return f.make(keyword, filterable=True), "one value in every row: a filter only"
    if p.few_values:
        why = f"{p.distinct} distinct values: searchable, a filter and facet"
        return f.make(keyword, searchable=True, filterable=True, facetable=True), why
    why = f"{p.distinct} distinct values, too many for a facet: searchable and a filter"
    return f.make(keyword, searchable=True, filterable=True), why


def _facet(p: ColumnProfile) -> dict[str, bool]:
    return {"searchable": True, "filterable": True, "facetable": p.distinct <= MAX_FACET_VALUES}


def _role_attribute(f: _Field, p: ColumnProfile, role: AttributeRole) -> tuple[Attribute, str]:
    weight = SEARCH_WEIGHTS.get(role, 1.0)
    if role is AttributeRole.title:
        why = f"searchable text, weight {weight:g}" + _html_why(p)
        return f.make(AttributeType.text, searchable=True, weight=weight, html=_html(p)), why
    if role is AttributeRole.price:
        why = "numbers: filter ranges, sort, a range facet derived from the catalog"
        return f.make(AttributeType.number, filterable=True, facetable=True, sortable=True), why
    if role is AttributeRole.image:
        return f.make(AttributeType.keyword), "returned only"
    if role is AttributeRole.description:
        why = "returned, not searched (descriptions name what goes with a product)" + _html_why(p)
        return f.make(AttributeType.text, html=_html(p)), why
    kind = AttributeType.category_path if p.path_share >= 0.5 else AttributeType.keyword
    attr = f.make(kind, searchable=True, weight=weight, filterable=True, facetable=True)
    why = f"searchable (weight {weight:g}), a filter and facet"
    return attr, ("category paths; " if kind is AttributeType.category_path else "") + why


def _html(p: ColumnProfile) -> bool:
    return p.html_share >= HTML_SHARE


def _html_why(p: ColumnProfile) -> str:
    return "; HTML tags stripped on import" if _html(p) else ""
