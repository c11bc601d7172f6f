"""Merchandising rules: what a merchandiser writes (conditions and actions) and what is stored.

JSON field names are camelCase, as in the rest of the public API (``productIds``, ``userGroup``).
Checks that need no tenant data run here (pydantic); checks against the tenant's attribute and user
group configuration run in :mod:`aisle.search.rules.validation`.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated, Literal
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from aisle.core.validation import ID_PATTERN, WHITESPACE, ExternalId
from aisle.search.model import FilterSpec

RULE_ID_PATTERN = ID_PATTERN
MAX_PATTERN_LENGTH = 256
ProductId = ExternalId


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def check_regex(pattern: str) -> str:
    """Return ``pattern`` when RE2 (linear-time matching, no backreferences or lookaround) accepts it.

    Matching runs through Arrow's RE2 kernel, so a shopper's query can never make a rule's pattern
    backtrack exponentially. Raises ValueError naming the problem.
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(f"a regex is at most {MAX_PATTERN_LENGTH} characters")
    try:
        pc.match_substring_regex(pa.array([""]), pattern=pattern)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"invalid regex (RE2 syntax, no backreferences or lookaround): {exc}") from exc
    return pattern


class QueryCondition(_Strict):
    """Which queries a rule fires on, compared after the search's own normalisation.

    ``exact``: the normalised query equals the normalised value. ``contains``: the value's words
    appear in the query as consecutive whole words (``running shoes`` is in ``red running shoes``,
    ``shoe`` is not in ``shoes``). ``prefix``: the normalised query starts with the value
    (characters). ``regex``: an RE2 pattern searched in the normalised query (anchor with ``^``/``$``).
    ``any``: every query, including the empty browse query.
    """

    match: Literal["exact", "contains", "prefix", "regex", "any"] = "any"
    value: str | None = Field(default=None, max_length=MAX_PATTERN_LENGTH, examples=["running shoes"])

    @field_validator("value")
    @classmethod
    def _check(cls, value: str | None, info: ValidationInfo) -> str | None:
        match = info.data.get("match", "any")
        if match == "any":
            if value:
                raise ValueError("not used with match 'any'; omit it")
            return None
        if not value or not value.strip():
            raise ValueError(f"required with match '{match}'")
        if match == "regex":
            check_regex(value)
        return value

    @model_validator(mode="after")
    def _value_given(self) -> QueryCondition:
        if self.match != "any" and self.value is None:  # "value" absent: its validator did not run
            raise ValueError(f"value: required with match '{self.match}'")
        return self


class Conditions(_Strict):
    """When a rule fires: the query, an optional time window and an optional user group (all must hold)."""

    query: QueryCondition = Field(default_factory=QueryCondition)
    start: datetime | None = Field(
        default=None, description="ISO-8601 instant with a timezone; the rule fires from then on."
    )
    end: datetime | None = Field(
        default=None, description="ISO-8601 instant with a timezone; the rule stops firing then."
    )
    userGroup: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="Fire only for shoppers of this group (an id of user_group_configuration.json).",
    )

    @field_validator("start", "end")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError("give a timezone, e.g. 2026-11-27T00:00:00Z")
        return value

    @model_validator(mode="after")
    def _window(self) -> Conditions:
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("end: must be after start")
        return self

    def active_at(self, now: datetime) -> bool:
        """Whether ``now`` (timezone-aware) is inside the window; start inclusive, end exclusive."""
        return (self.start is None or self.start <= now) and (self.end is None or now < self.end)


class PinItem(_Strict):
    productId: ProductId
    position: int = Field(ge=1, le=1000, description="1-based position in the full result list.")


class PinAction(_Strict):
    """Show these products at these positions (on whichever page the position falls)."""

    type: Literal["pin"]
    items: list[PinItem] = Field(min_length=1, max_length=50)

    @field_validator("items")
    @classmethod
    def _unique(cls, items: list[PinItem]) -> list[PinItem]:
        ids = [i.productId for i in items]
        positions = [i.position for i in items]
        if len(set(ids)) != len(ids):
            raise ValueError("a product is pinned once per rule")
        if len(set(positions)) != len(positions):
            raise ValueError("each position takes one product")
        return items


class HideAction(_Strict):
    """Never return these products (not shown, not counted in total or facets)."""

    type: Literal["hide"]
    productIds: list[ProductId] = Field(min_length=1, max_length=1000)


class BoostAction(_Strict):
    """Raise (``boost``) or lower (``bury``) products matching every clause of ``condition``.

    ``weight`` is added to a matching product's score (a bury adds it to every other product); for
    scale, each matched query word is worth 10 and a recognised brand in the query 15.
    """

    type: Literal["boost", "bury"]
    condition: list[FilterSpec] = Field(min_length=1, max_length=10, description="Clauses, all must hold.")
    weight: float = Field(default=20.0, gt=0, le=1000)


class FilterAction(_Strict):
    """Restrict the results to products matching every filter (shown in queryGraph.filters)."""

    type: Literal["filter"]
    filters: list[FilterSpec] = Field(min_length=1, max_length=10)


def check_redirect_url(url: str) -> str:
    """``url`` when it is an absolute http(s) URL with a host, or a path on the shop's own site.

    A site path starts with one ``/`` (``//host`` is protocol-relative: another site); no part may hold
    whitespace, control characters or a backslash (browsers read ``/\\host`` as ``//host``, WHATWG URL
    standard, "special authority ignore slashes state"). Raises ValueError saying which rule failed.
    """
    if any(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") or ch == "\\" for ch in url):
        raise ValueError("must not contain whitespace, control characters or a backslash")
    if url.startswith("/"):
        if url.startswith("//"):
            raise ValueError("'//' starts a protocol-relative URL (another site); give https://host/...")
        return url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError("must be an http(s) URL with a host, or a site path starting with '/'")
    host = parts.hostname or ""
    if not host or parts.username is not None or parts.password is not None:
        raise ValueError("an http(s) URL needs a host and no user:password@")
    try:
        host.encode("idna")
    except UnicodeError as exc:
        raise ValueError(f"host '{host}' is not a valid domain name") from exc
    return url


class RedirectAction(_Strict):
    """Send the shopper to a page instead (``redirect`` of the search response)."""

    type: Literal["redirect"]
    url: Annotated[str, AfterValidator(check_redirect_url)] = Field(
        max_length=2048,
        description="An http(s) URL with a host, or a site path starting with a single '/'.",
        examples=["/sale/shoes", "https://shop.example/sale"],
    )


class RewriteAction(_Strict):
    """Search this text instead of the shopper's query (the original stays in queryGraph.original)."""

    type: Literal["rewrite"]
    query: str = Field(
        min_length=1,
        max_length=256,
        pattern=rf"^[^\x00-\x1f\x7f]*[^\x00-\x1f\x7f{WHITESPACE}][^\x00-\x1f\x7f]*$",
        description="1-256 characters, not blank, no control characters.",
        examples=["running shoes"],
    )


class ExternalAction(_Strict):
    """Send this query to the tenant's external retail search service (``crs_config.json``), whose
    answer replaces or follows Aisle's as ``fallback.merge`` says; needs ``rule`` in ``fallback.when``."""

    type: Literal["external"]


Action = Annotated[
    PinAction | HideAction | BoostAction | FilterAction | RedirectAction | RewriteAction | ExternalAction,
    Field(discriminator="type"),
]


class RuleBody(_Strict):
    """What a client writes: everything but the id, version and timestamps."""

    name: str = Field(min_length=1, max_length=200, examples=["Nike first on running shoes"])
    description: str = Field(default="", max_length=2000)
    priority: int = Field(default=0, ge=-1000, le=1000, description="Higher fires first and wins ties.")
    enabled: bool = True
    conditions: Conditions = Field(default_factory=Conditions)
    actions: list[Action] = Field(min_length=1, max_length=20)
    appliesToAllQueries: bool = Field(
        default=False,
        description="Must be true to save a rule whose query condition is 'any' (the default): confirms "
        "that it may change every search. POST /rules/preview shows what it does first.",
    )

    @field_validator("actions")
    @classmethod
    def _one_each(cls, actions: list[Action]) -> list[Action]:
        for kind in ("redirect", "rewrite", "external"):
            if sum(1 for a in actions if a.type == kind) > 1:
                raise ValueError(f"at most one '{kind}' action per rule")
        return actions


class Rule(RuleBody):
    """A stored rule: ``version`` starts at 1 and grows by one on every replace (never reused)."""

    id: str = Field(pattern=RULE_ID_PATTERN)
    version: int = Field(ge=1)
    createdAt: datetime
    updatedAt: datetime
