"""Search engine request and result types (pydantic, so the services document them as they are)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    model_serializer,
    model_validator,
)

from aisle.core.validation import NumbersChecked

SortOrder = Literal["relevance", "price_asc", "price_desc"]
StageName = Literal["strict", "relaxed", "typo", "browse", "none"]
HybridState = Literal["used", "building", "unavailable"]


class FilterSpec(BaseModel):
    """A pre-applied filter (spec "Search request": filters of field and value).

    ``value`` is one value, or a list (OR within the field). Numeric fields also take a range
    object ``{"gte": 10, "lt": 50}`` (keys gt, gte, lt, lte). Category paths match the node and
    everything below it (``"Footwear > Shoes"``).
    """

    model_config = ConfigDict(extra="forbid")

    field: str = Field(min_length=1, max_length=64, examples=["brand"])
    value: Annotated[str | float | bool | list[str | float | bool] | dict[str, float], NumbersChecked] = (
        Field(
            examples=["Nike"],
            description="A value, a list of values (OR) or a range; numbers finite and within +-2^53.",
        )
    )

    @model_validator(mode="after")
    def _check(self) -> FilterSpec:
        if isinstance(self.value, list) and not self.value:
            raise ValueError("value: an empty list matches nothing; omit the filter instead")
        if isinstance(self.value, list) and len(self.value) > 100:
            raise ValueError("value: at most 100 values per filter")
        if isinstance(self.value, dict):
            unknown = set(self.value) - {"gt", "gte", "lt", "lte"}
            if unknown or not self.value:
                raise ValueError("value: a range takes keys gt, gte, lt, lte")
        return self


class AppliedFilter(BaseModel):
    """A filter as the engine applied it (values mapped to the catalog's spelling)."""

    field: str
    values: list[str | float | bool] = Field(default_factory=list)
    range: dict[str, float] | None = None
    source: Literal["request", "query", "rule"] = "request"


class Correction(BaseModel):
    """Query words the catalog does not know, and the catalog words searched alongside them.

    ``kind``: ``spelling`` (nkie → nike), ``split`` (rainbarrel → rain barrel) or ``join``
    (thresh hold → threshold).
    """

    original: str
    corrected: str
    kind: Literal["spelling", "split", "join"] = "spelling"


class SynonymExpansion(BaseModel):
    """Query words and the synonyms searched alongside them (global_configuration.json)."""

    text: str
    expansions: list[str]


class AttributeMatch(BaseModel):
    """Catalog values recognised in the query: a filter in the strict stage, a boost after it."""

    field: str
    values: list[str]
    text: str = Field(description="The query words that named them.")


class ExternalSearchGraph(BaseModel):
    """What the external retail search service (``crs_config.json``) did for this search.

    ``status``: ``answered`` (its products are in the response), ``skipped`` (not asked; ``reason`` says
    why: ``not_configured``, ``not_triggered``, ``breaker_open``, ``deadline``, ``busy``) or ``failed``
    (asked, no usable answer; ``code`` is the error code). ``reason`` for an answer is the trigger
    (``no_results``, ``few_results``, ``rule``, ``error``, or ``proxy`` in the proxy service).
    """

    status: Literal["answered", "skipped", "failed"]
    reason: str
    backend: str | None = None
    code: str | None = None
    merge: Literal["replace", "append"] | None = None
    products: int = Field(default=0, description="External products added to the response.")
    total: int | None = Field(default=None, description="Matches the external service reported.")
    cached: bool = False
    took_ms: float | None = None
    attribution_token: str | None = Field(
        default=None,
        description="The external service's own token for its answer (Google Cloud Retail's "
        "attributionToken), for events sent to that service; Aisle's own is the response's attributionToken.",
    )


class ExperimentVariant(BaseModel):
    """One experiment a search is in: its id and the visitor's variant (the log's tag
    ``experimentId:variantId``)."""

    experimentId: str
    variantId: str


class FollowUpOption(BaseModel):
    """One answer to a follow-up question: send ``{"field": <attribute>, "value": <value>}`` as a filter."""

    value: str = Field(description="The filter value (a category's full path).", examples=["Blue"])
    label: str = Field(description="What to show (a category's last level).", examples=["Blue"])
    count: int = Field(description="Products of this search that have this value.")


class FollowUp(BaseModel):
    """A question for a broad search ("Which colour?"), answered by filtering on ``attribute``.

    The filters carry the conversation: answering is the same search with one more filter
    (``{"field": attribute, "value": option.value}``); each filter on an askable attribute counts as a
    question answered, so any replica answers the next request the same way.
    """

    attribute: str = Field(examples=["color"])
    question: str = Field(examples=["Which colour?"])
    options: list[FollowUpOption] = Field(description="2 to 8 answers, most frequent first.")
    number: int = Field(description="This question's number within the query (1 for the first).")


class FollowUpCandidate(BaseModel):
    """An attribute guided search weighed: its expected information gain (bits) and distinct values."""

    attribute: str
    gain_bits: float
    values: int


class HybridFloor(BaseModel):
    """The similarity floor of hybrid retrieval for one query (:mod:`aisle.search.stages.hybrid`)."""

    floor: float = Field(description="Cosine a nearest product had to reach (-1..1).")
    encoder: str = Field(description="How the query was embedded: 'static' or 'minilm'.")
    source: Literal["calibrated", "configured"] = Field(
        description="'calibrated' on the tenant's catalog when its vectors were built, or 'configured' "
        "(global_configuration hybrid.min_similarity)."
    )
    below: int = Field(default=0, description="Nearest products left out for falling below the floor.")


class FollowUpGraph(BaseModel):
    """Why the answer does or does not carry a follow-up question.

    Absent when the tenant has guided search off. ``reason``: ``asked``; or why not: ``few_results`` (under
    ``min_results``), ``max_questions`` (as many filters on askable attributes as questions allowed),
    ``no_attribute`` (no askable attribute left unfiltered with enough values), ``low_gain`` (the best
    question is worth under ``min_gain_bits``), ``deadline``, ``external`` (the external service answered),
    ``strict_few`` (every query word together matched at most 5 products, and the query reads as
    the first one's name) or
    ``title_match`` (the first result's title is all in the query): the query names a product.
    """

    asked: bool
    reason: str
    chooser: str | None = None
    attribute: str | None = None
    answered: int = Field(
        default=0, description="Questions already answered (filters on askable attributes)."
    )
    candidates: list[FollowUpCandidate] = Field(default_factory=list)


class QueryGraph(BaseModel):
    """What the engine understood of the query and how it answered it.

    ``normalized``: the query after case, accent, punctuation and unit normalisation.
    ``terms``: the analysed (lowercased, stemmed) terms searched. ``stage``: the retrieval stage
    that answered (``strict``: all terms; ``relaxed``: most terms; ``typo``: edit distance by term
    length; ``browse``: empty query). ``stages_tried`` lists each stage with its hit count.
    """

    original: str
    normalized: str
    tokens: list[str] = Field(default_factory=list, description="Words of the normalised query.")
    terms: list[str] = Field(default_factory=list, description="Analysed terms searched (stemmed).")
    stop_words: list[str] = Field(default_factory=list)
    corrections: list[Correction] = Field(
        default_factory=list, description="Spelling corrections, searched alongside the original words."
    )
    attributes: list[AttributeMatch] = Field(default_factory=list)
    price: dict[str, float] | None = Field(default=None, description="Price constraint, e.g. {'lte': 2000}.")
    rules: list[dict[str, Any]] = Field(
        default_factory=list, description="Merchandising rules that fired: id, name, version, actions."
    )
    synonyms: list[SynonymExpansion] = Field(default_factory=list)
    stage: StageName = "none"
    stages_tried: list[dict[str, Any]] = Field(default_factory=list)
    filters: list[AppliedFilter] = Field(default_factory=list)
    sort: SortOrder = "relevance"
    external: ExternalSearchGraph | None = Field(
        default=None, description="The external search service's part, when the tenant has one."
    )
    hybrid: HybridState | None = Field(
        default=None,
        description="Hybrid retrieval for this query, when the tenant enables it and the query is "
        "relevance-sorted: 'used' (lexical and embedding candidates fused), 'building' (the text "
        "vectors are being built in the background: lexical results only until they land, no restart "
        "needed), 'unavailable' (no text vectors and no build running: lexical results only).",
    )
    hybrid_floor: HybridFloor | None = Field(
        default=None,
        description="The similarity floor nearest products had to reach to join the answer, when the "
        "vector leg looked for products no query word matched.",
    )
    experiments: list[ExperimentVariant] = Field(
        default_factory=list,
        description="The A/B experiments this search is in and the visitor's variant in each (only for "
        "searches naming a visitorId while an experiment of the tenant runs).",
    )
    follow_up: FollowUpGraph | None = Field(
        default=None, description="Whether a follow-up question was asked and why (guided search)."
    )
    took_ms: float = 0.0


class FacetValue(BaseModel):
    value: str
    count: int


class Product(BaseModel):
    """The JSON shape of a product in an answer (spec "Search response": id, title, price, brand, color,
    score; the tenant catalog's other attributes come as additional properties). It documents the
    OpenAPI schema, so generated clients see typed fields; the engine keeps products as plain dicts."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(examples=["15970"])
    title: str | None = Field(default=None, examples=["Nike Men Black Running Shoes"])
    price: float | None = Field(default=None, description="In the catalog's currency.")
    brand: str | None = None
    color: str | None = None
    score: float | None = Field(default=None, description="Relevance score of this answer (higher first).")


PRODUCTS_SCHEMA = WithJsonSchema(
    {
        "type": "array",
        "items": Product.model_json_schema(),
        "description": "The page of products, best first.",
    }
)
"""``SearchResult.products`` as documented: typed products (the values stay dicts at run time)."""


EXTERNAL_ONLY = (
    "correctedQuery",
    "attributionToken",
    "followUp",
    "corrected_query",
    "attribution_token",
    "follow_up",
    "catalogSequence",
    "catalog_sequence",
)
"""Keys left out of a response when None: ``correctedQuery`` (only an external service corrects),
``attributionToken`` (only an answer shown to a shopper has one; a rule preview has none) and
``followUp`` (only a broad search of a tenant with guided search asks)."""


class SearchResult(BaseModel):
    """Spec "Search response": products, total, facets, queryGraph; ``correctedQuery`` only when the
    external search service gave one; ``attributionToken``, the answer's token (set by the service that
    answers: every response of the HTTP services carries one)."""

    model_config = ConfigDict(populate_by_name=True)

    products: Annotated[list[dict[str, Any]], PRODUCTS_SCHEMA]
    total: int
    facets: dict[str, list[FacetValue]] = Field(default_factory=dict)
    query_graph: QueryGraph = Field(alias="queryGraph")
    redirect: str | None = Field(
        default=None,
        description="URL a merchandising rule (or the external service's redirectUri) sends this query to.",
    )
    corrected_query: str | None = Field(
        default=None, alias="correctedQuery", description="The query the external service searched instead."
    )
    follow_up: FollowUp | None = Field(
        default=None,
        alias="followUp",
        description="A question for a broad search (guided search, when the tenant enables it): show "
        "its options; the shopper's answer is the same search with the option as one more filter.",
    )
    catalog_sequence: int | None = Field(
        default=None,
        alias="catalogSequence",
        description="The tenant's catalog sequence this answer reflects: every product write acknowledged "
        "with a `sequence` at most this one is in it (`PUT`/`PATCH`/`DELETE /products/{id}`, "
        "`POST /products/batch`, `POST /catalog/import` answer theirs), so a client can wait for its own "
        "write.",
    )
    attribution_token: str | None = Field(
        default=None,
        alias="attributionToken",
        max_length=128,
        description="Opaque token of this answer: send it as `attributionToken` (with the product's "
        "`position`) on the shopper's click and purchase events (`POST /events`), so analytics credits "
        "them to this answer.",
    )

    def json_bytes(self) -> bytes:
        """The JSON of ``model_dump(by_alias=True)`` (same keys, order and values), built without
        pydantic's serializer walking every product: the products and facets are plain values already."""
        data: dict[str, Any] = {
            "products": self.products,
            "total": self.total,
            "facets": {
                name: [{"value": f.value, "count": f.count} for f in values]
                for name, values in self.facets.items()
            },
            "queryGraph": self.query_graph.model_dump(by_alias=True),
            "redirect": self.redirect,
        }
        if self.corrected_query is not None:
            data["correctedQuery"] = self.corrected_query
        if self.follow_up is not None:
            data["followUp"] = self.follow_up.model_dump()
        if self.catalog_sequence is not None:
            data["catalogSequence"] = self.catalog_sequence
        if self.attribution_token is not None:
            data["attributionToken"] = self.attribution_token
        return orjson.dumps(data)

    # No return annotation: pydantic would take it as the JSON schema (the fields' schema stays).
    @model_serializer(mode="wrap")
    def _drop_absent_external(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if not (k in EXTERNAL_ONLY and v is None)}
