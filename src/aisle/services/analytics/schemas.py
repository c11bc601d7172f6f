"""Response bodies of the analytics service (``GET /analytics/...``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Simulated(BaseModel):
    """The part of the period the demo's traffic simulator wrote: these figures are not shoppers'."""

    from_: str = Field(alias="from", description="First simulated day (UTC), YYYY-MM-DD.")
    to: str = Field(description="Last simulated day (UTC), YYYY-MM-DD.")
    note: str = Field(description="How the simulated traffic was drawn.")

    model_config = ConfigDict(populate_by_name=True)


class SimulatedSource(Simulated):
    """One simulator's part of the tenant's log."""

    source: str = Field(description="What simulated it: the demo's traffic, an A/B test's visitors.")


class Report(BaseModel):
    """What every report answers besides its figures."""

    model_config = ConfigDict(populate_by_name=True)

    tenant: str
    from_: str = Field(alias="from", description="Start of the period (UTC, ISO-8601), included.")
    to: str = Field(description="End of the period (UTC, ISO-8601), excluded.")
    simulated: Simulated | None = Field(
        default=None,
        description="Set when the tenant's log holds simulated traffic (the demo's): the first to the last "
        "simulated day of every source, their notes joined.",
    )
    simulatedSources: list[SimulatedSource] = Field(
        default_factory=list,
        description="Every simulated source in the tenant's log with its own period, earliest first.",
    )


class Summary(Report):
    """``GET /analytics/summary``: the searches of the period. A search is a search sequence: the
    answers to one query typed letter by letter within seconds count as one search of the last query.
    Every figure but ``emptyQuerySearches`` is of searches with a query."""

    searches: int = Field(description="Searches with a query (a query typed letter by letter: one).")
    visitors: int = Field(description="Distinct visitorIds that searched.")
    noResultSearches: int = Field(description="Searches whose total was 0.")
    noResultRate: float | None = Field(description="noResultSearches / searches (null without searches).")
    clickThroughRate: float | None = Field(description="Searches with at least one click / searches.")
    conversionRate: float | None = Field(
        description="Searches with at least one attributed purchase / searches."
    )
    revenue: float = Field(description="Attributed purchases' price x quantity (catalog currency).")
    averageClickPosition: float | None = Field(
        description="Mean 1-based position of clicks on search results."
    )
    emptyQuerySearches: int = Field(
        description="Searches with an empty query (page loads, browsing): in no other figure."
    )


class DayRow(BaseModel):
    day: str = Field(description="UTC day, YYYY-MM-DD.")
    searches: int
    noResultRate: float | None
    clickThroughRate: float | None
    conversionRate: float | None
    revenue: float
    partial: bool = Field(
        description="The day is cut short: not over yet (today) or only partly in the period; its "
        "figures are not a whole day's."
    )


class QueryRow(BaseModel):
    query: str = Field(description="The normalised query.")
    searches: int
    noResultSearches: int
    clicks: int
    clickThroughRate: float | None
    conversions: int
    revenue: float


class QueryCount(BaseModel):
    query: str = Field(description="The normalised query.")
    searches: int


class FollowUpRow(BaseModel):
    """Guided search on one query: questions asked, and searches whose filters answered one."""

    query: str = Field(description="The normalised query.")
    searches: int
    asked: int = Field(description="Searches whose answer carried a follow-up question.")
    askRate: float | None = Field(description="asked / searches.")
    answered: int = Field(
        description="Searches whose filters answered a question (a filter on an askable attribute)."
    )
    answerRate: float | None = Field(description="answered / asked (null when none was asked).")
    attribute: str = Field(description="The attribute asked about most ('' when none was asked).")


class PositionRow(BaseModel):
    position: int = Field(description="1-based position in the results.")
    clicks: int
    clickThroughRate: float | None = Field(
        description="Clicks at the position / searches that showed one there."
    )


class ContainerRow(BaseModel):
    containerId: str
    answers: int
    clicks: int
    clickThroughRate: float | None
    conversions: int
    revenue: float


class ModelRow(BaseModel):
    modelId: str
    answers: int = Field(description="Recommendation answers the model served a slot of.")
    clicks: int
    clickThroughRate: float | None
    conversions: int
    revenue: float


class RuleRow(BaseModel):
    ruleId: str
    searches: int = Field(description="Searches the rule fired on.")
    clickThroughRate: float | None
    conversions: int


class Daily(Report):
    items: list[DayRow]


class Queries(Report):
    items: list[QueryRow]


class QueryCounts(Report):
    items: list[QueryCount]


class FollowUps(Report):
    items: list[FollowUpRow]


class Positions(Report):
    items: list[PositionRow]


class Containers(Report):
    items: list[ContainerRow]


class Models(Report):
    items: list[ModelRow]


class Rules(Report):
    items: list[RuleRow]
