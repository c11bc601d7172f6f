"""Request and response bodies of the rule management service."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aisle.search.model import FilterSpec, SearchResult, SortOrder
from aisle.search.query import SearchQuery
from aisle.search.rules.model import RULE_ID_PATTERN, Rule, RuleBody


class RuleCreate(RuleBody):
    """Body of ``POST /rules``: a rule, optionally with the id to give it (else a random one)."""

    id: str | None = Field(default=None, pattern=RULE_ID_PATTERN, examples=["nike-running"])


class RuleReplace(RuleBody):
    """Body of ``PUT /rules/{id}``: the whole new rule and the version it replaces.

    The version may come as ``If-Match: "3"`` instead; one of the two is required. A rule as read
    (``GET``) can be sent back edited: ``id`` must then be the path's, ``createdAt`` and ``updatedAt``
    are read-only and ignored.
    """

    version: int | None = Field(default=None, ge=1, description="The version read; stale gets 409.")
    id: str | None = Field(default=None, description="Optional; must equal the path's id.")
    createdAt: datetime | None = Field(default=None, description="Read-only; ignored.")
    updatedAt: datetime | None = Field(default=None, description="Read-only; ignored.")


class RuleWarningOut(BaseModel):
    field: str = Field(examples=["actions.0.items.1.productId"])
    message: str


class RuleSaved(BaseModel):
    """A rule as stored, and what was accepted but looks unintended (unknown product ids)."""

    rule: Rule
    warnings: list[RuleWarningOut] = Field(default_factory=list)


class RuleList(BaseModel):
    """A page of rules, highest priority first (then by id)."""

    rules: list[Rule]
    total: int = Field(description="Rules matching the filter, over all pages.")
    offset: int
    limit: int


class RuleVersion(BaseModel):
    """One version of a rule: the rule as it was, or ``deleted`` (a tombstone, ``rule`` null)."""

    version: int
    deleted: bool
    rule: Rule | None = None


class RuleHistory(BaseModel):
    """Every version of a rule, newest first (revert: ``PUT`` an old one at the current version)."""

    ruleId: str
    versions: list[RuleVersion]


class PreviewSearch(BaseModel):
    """The search to preview (``POST /search`` fields; the tenant is the ``tenant`` query parameter)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: str = Field(default="", max_length=512, examples=["running shoes"])
    size: int = Field(default=20, ge=0, le=100)
    from_: int = Field(default=0, ge=0, le=10_000, alias="from")
    filters: list[FilterSpec] = Field(default_factory=list, max_length=32)
    facets: list[str] = Field(default_factory=list, max_length=16)
    sort: SortOrder = "relevance"
    userGroup: str | None = Field(default=None, max_length=64)

    def search_query(self) -> SearchQuery:
        """The previewed search as the engine takes it."""
        return SearchQuery(
            text=self.query,
            size=self.size,
            offset=self.from_,
            filters=self.filters,
            facets=self.facets,
            sort=self.sort,
            user_group=self.userGroup,
        )


class PreviewRequest(BaseModel):
    """Body of ``POST /rules/preview``: a search and the rule to preview.

    ``rule`` (a draft) or ``ruleId`` (a stored rule), or both (a draft edit of a stored rule). The search
    runs with the tenant's live rules minus ``ruleId`` ("without"), and with the previewed rule added
    ("with"). The previewed rule counts as enabled; its time window is checked at ``at`` (default: now).
    Neither: the live results on both sides, nothing changed (an editor whose rule has no action yet).
    """

    model_config = ConfigDict(extra="forbid")

    search: PreviewSearch
    rule: RuleBody | None = None
    ruleId: str | None = Field(default=None, pattern=RULE_ID_PATTERN)
    at: datetime | None = Field(default=None, description="Instant to evaluate time windows at (ISO-8601).")

    @model_validator(mode="after")
    def _something(self) -> PreviewRequest:
        if self.at is not None and self.at.utcoffset() is None:
            raise ValueError("at: give a timezone, e.g. 2026-11-27T00:00:00Z")
        return self


class Move(BaseModel):
    id: str
    before: int = Field(description="1-based position without the rule.")
    after: int = Field(description="1-based position with the rule.")


class PreviewChanges(BaseModel):
    """What the rule changed on the requested page."""

    fired: bool = Field(description="Whether the previewed rule fired for this search.")
    added: list[str] = Field(default_factory=list, description="Products only on the page with the rule.")
    removed: list[str] = Field(default_factory=list, description="Products only on the page without it.")
    moved: list[Move] = Field(default_factory=list)
    totalBefore: int
    totalAfter: int
    redirectBefore: str | None = None
    redirectAfter: str | None = None


class PreviewResponse(BaseModel):
    withoutRule: SearchResult
    withRule: SearchResult
    changes: PreviewChanges
    warnings: list[RuleWarningOut] = Field(default_factory=list)
