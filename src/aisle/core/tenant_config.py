"""The five per-tenant configuration files, as versioned pydantic models.

Stored under ``<bucket>/<tenant>/`` (interface spec, "Tenant configuration files"); all five are
required. :func:`aisle.core.tenancy.load_tenant_config` validates them on load and names the
tenant, file and field of any problem.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aisle.core.crs_config import CrsConfig as CrsConfig  # its own module; re-exported here
from aisle.core.follow_up_config import FollowUpConfig as FollowUpConfig  # likewise
from aisle.core.stock import StockConfig as StockConfig  # likewise


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttributeType(str, Enum):
    """How a catalog field is stored and indexed.

    ``text``: tokenised full text; ``keyword``: exact string (facets, filters); ``number``: float;
    ``integer``; ``boolean``; ``category_path``: hierarchical category, levels joined with ``>``.
    """

    text = "text"
    keyword = "keyword"
    number = "number"
    integer = "integer"
    boolean = "boolean"
    category_path = "category_path"


class AttributeRole(str, Enum):
    """What a field means to the platform (spec "Search response": id, title, price, brand, color)."""

    title = "title"  # type: ignore[assignment]  # the role name shadows str.title on a str enum
    description = "description"
    brand = "brand"
    color = "color"
    price = "price"
    category = "category"
    gender = "gender"
    size = "size"
    image = "image"


class Attribute(_Strict):
    """One catalog field of the tenant's products.

    ``source`` names the column(s) it is read from on import (default: ``name``); for a
    ``category_path`` a list of columns gives the levels, top first.
    """

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    type: AttributeType = AttributeType.keyword
    source: str | list[str] | None = None
    role: AttributeRole | None = None
    searchable: bool = False
    weight: Annotated[float, Field(gt=0, le=100)] = 1.0
    filterable: bool = False
    facetable: bool = False
    sortable: bool = False
    returned: bool = True
    html: bool = Field(default=False, description="Strip HTML tags from this field on import.")
    extract: bool | None = Field(
        default=None,
        description="Recognise this field's values in queries (query understanding). Default: on for "
        "filterable keyword fields with role brand, color, gender, category or size.",
    )
    ask: bool | None = Field(
        default=None,
        description="Guided search may ask the shopper about this field (global follow_up settings). "
        "Default: on for filterable, facetable keyword and category_path fields.",
    )
    question: str | None = Field(
        default=None,
        min_length=1,
        max_length=120,
        description="The follow-up question in the tenant's words, e.g. 'Which colour?'. Default: "
        "'Which <name>?' from the field's name.",
    )

    @model_validator(mode="after")
    def _check(self) -> Attribute:
        if self.searchable and self.type not in (
            AttributeType.text,
            AttributeType.keyword,
            AttributeType.category_path,
        ):
            raise ValueError(
                f"attribute '{self.name}': only text, keyword or category_path fields can be searchable"
            )
        if self.sortable and self.type not in (
            AttributeType.number,
            AttributeType.integer,
            AttributeType.keyword,
        ):
            raise ValueError(
                f"attribute '{self.name}': only number, integer or keyword fields can be sortable"
            )
        if isinstance(self.source, list) and self.type is not AttributeType.category_path:
            raise ValueError(f"attribute '{self.name}': a list of source columns needs type category_path")
        if self.ask and not (
            self.filterable
            and self.facetable
            and self.type in (AttributeType.keyword, AttributeType.category_path)
        ):
            raise ValueError(
                f"attribute '{self.name}': only filterable, facetable keyword or category_path fields "
                "can be asked about"
            )
        return self

    @property
    def extractable(self) -> bool:
        """Whether query understanding looks for this attribute's values in queries."""
        if self.extract is not None:
            return self.extract and self.filterable
        return (
            self.filterable
            and self.type in (AttributeType.keyword, AttributeType.category_path)
            and (
                self.role
                in (
                    AttributeRole.brand,
                    AttributeRole.color,
                    AttributeRole.gender,
                    AttributeRole.category,
                    AttributeRole.size,
                )
            )
        )

    @property
    def askable(self) -> bool:
        """Whether guided search may ask about this attribute (its values become filters)."""
        eligible = (
            self.filterable
            and self.facetable
            and self.type in (AttributeType.keyword, AttributeType.category_path)
        )
        return eligible and (self.ask is None or self.ask)

    @property
    def sources(self) -> list[str]:
        if self.source is None:
            return [self.name]
        return [self.source] if isinstance(self.source, str) else list(self.source)


class AttributeConfiguration(_Strict):
    """``attribute_configuration.json``: the field schema of the tenant's catalog."""

    version: Literal[1] = 1
    id_source: str = Field(default="id", description="Column holding the product id.")
    attributes: list[Attribute]

    @field_validator("attributes")
    @classmethod
    def _unique(cls, value: list[Attribute]) -> list[Attribute]:
        seen: set[str] = set()
        for attr in value:
            if attr.name in seen or attr.name == "id":
                raise ValueError(f"attribute name '{attr.name}' is reserved or repeated")
            seen.add(attr.name)
        roles = [a.role for a in value if a.role is not None]
        if len(roles) != len(set(roles)):
            raise ValueError("each role may be given to one attribute only")
        if not any(a.role is AttributeRole.title for a in value):
            raise ValueError("one attribute must have role 'title'")
        return value

    def by_name(self, name: str) -> Attribute | None:
        for attr in self.attributes:
            if attr.name == name:
                return attr
        return None

    def by_role(self, role: AttributeRole) -> Attribute | None:
        for attr in self.attributes:
            if attr.role is role:
                return attr
        return None


class TypeSuggestionConfig(_Strict):
    enabled: bool = True
    boost: Annotated[float, Field(ge=0, le=100)] = 1.0
    limit: Annotated[int, Field(ge=0, le=50)] = 5


SuggestionType = Literal["query", "brand", "category", "product"]


def _default_suggestion_types() -> dict[SuggestionType, TypeSuggestionConfig]:
    return {
        "query": TypeSuggestionConfig(boost=1.0, limit=5),
        "brand": TypeSuggestionConfig(boost=1.5, limit=3),
        "category": TypeSuggestionConfig(boost=1.2, limit=3),
        "product": TypeSuggestionConfig(boost=0.8, limit=4),
    }


class AutocompleteConfiguration(_Strict):
    """``autocomplete_configuration.json``: suggestion sources, per-type boosts and limits."""

    version: Literal[1] = 1
    max_suggestions: Annotated[int, Field(ge=1, le=50)] = 10
    min_prefix_length: Annotated[int, Field(ge=1, le=10)] = 1
    typo_tolerance: bool = True
    types: dict[SuggestionType, TypeSuggestionConfig] = Field(default_factory=_default_suggestion_types)


class Synonym(_Strict):
    """Two-way (``terms`` all equivalent) or one-way (``from`` expands to ``to``) synonym."""

    terms: list[str] | None = None
    from_: str | None = Field(default=None, alias="from")
    to: list[str] | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _shape(self) -> Synonym:
        two_way = self.terms is not None
        one_way = self.from_ is not None or self.to is not None
        if two_way == one_way:
            raise ValueError("give either 'terms' (two-way) or 'from' and 'to' (one-way)")
        if one_way and not (self.from_ and self.to):
            raise ValueError("a one-way synonym needs both 'from' and 'to'")
        if two_way and len(self.terms or []) < 2:
            raise ValueError("a two-way synonym needs at least two terms")
        return self


class TypoConfig(_Strict):
    """Edit distance allowed by term length (Typesense/Algolia convention: 1 typo from 4 chars, 2 from 8)."""

    enabled: bool = True
    min_length_one_typo: Annotated[int, Field(ge=1, le=20)] = 4
    min_length_two_typos: Annotated[int, Field(ge=2, le=30)] = 8


class StageConfig(_Strict):
    """Staged retrieval: stop at the first stage reaching ``min_hits``."""

    min_hits: Annotated[int, Field(ge=0, le=10_000)] = 10
    relaxed_min_should_match: Annotated[float, Field(gt=0, le=1)] = 0.6
    typo: TypoConfig = Field(default_factory=TypoConfig)


class PriceRange(_Strict):
    start: float | None = None
    end: float | None = None


# English function words that carry no product meaning. "in" is kept: it is a unit (1/2 in).
DEFAULT_STOP_WORDS = (
    "a",
    "an",
    "and",
    "the",
    "for",
    "of",
    "with",
    "to",
    "by",
    "at",
    "my",
    "is",
    "are",
    "that",
)


LexicalStage = Literal["strict", "relaxed", "typo", "none"]


def _expand_after_partial_matches() -> list[LexicalStage]:
    return ["relaxed", "typo", "none"]


class HybridConfig(_Strict):
    """Hybrid retrieval (lexical + MiniLM vectors, fused) in ``POST /search``; needs the tenant's text
    vectors (``aisle vectors build``), otherwise search stays lexical. See ``aisle.search.stages.hybrid``."""

    # Home Depot dev (1,494 sampled queries): lexical 0.4067 NDCG@10, blend 0.2 0.4155, blend 0.3 0.4140,
    # RRF 0.4032 (RRF flattens BM25's term-coverage gaps, which matter there).
    enabled: bool = True
    method: Literal["rrf", "blend"] = "blend"
    candidates: Annotated[int, Field(ge=10, le=1000)] = Field(
        default=100, description="How many lexical hits are fused with the nearest products."
    )
    # Home Depot dev, hybrid + the demo ranker retrained per value (issue 32; 5,956 queries, paired):
    # 5-fold CV NDCG@10 100 neighbours 0.4381, 50 0.4393, 30 0.4391, 20 0.4405 (+0.0024, 95% CI
    # +0.0005..+0.0044), 10 0.4393, 0 0.4392 (20 queries then find nothing); the ranker trained at 100
    # served at 20: +0.0021 (+0.0007..+0.0035). The hybrid stage at 20 takes 0.66-0.76x the time of 100,
    # a whole search 0.83-0.88x (in process, alternated query by query; the usearch search itself costs
    # the same at any k <= its ef of 64). A query no word matches looks up max(neighbours, candidates).
    neighbours: Annotated[int, Field(ge=0, le=1000)] = Field(
        default=20,
        description="How many nearest products the vector search looks up (those among the lexical "
        "candidates, or that the request filters or rules exclude, are then dropped); for a query no "
        "word matches, at least `candidates` (the nearest products are then the whole answer). 0 skips "
        "the nearest-neighbour search, so such a query finds nothing.",
    )
    rrf_k: Annotated[float, Field(ge=1, le=1000)] = 60.0
    vector_weight: Annotated[float, Field(ge=0, le=10)] = 1.0
    blend_weight: Annotated[float, Field(ge=0, le=1)] = 0.2
    # HD dev NDCG@10 in process: MiniLM 0.4276, static 0.4236 (lexical 0.4181); a new query's MiniLM
    # vector costs about 4 ms of CPU, the static one tens of microseconds (issue 18).
    query_encoder: Literal["static", "minilm"] = Field(
        default="static",
        description="How the query is embedded: 'static' (the token table distilled from MiniLM and "
        "fitted to the tenant's catalog, built with its text vectors; MiniLM when the table has none) "
        "or 'minilm' (the full model: slightly better matches, about 4 ms of CPU per new query).",
    )
    min_similarity: Annotated[float, Field(ge=-1, le=1)] | None = Field(
        default=None,
        description="The cosine a product no query word matched must reach to join the answer. Unset: "
        "the floor calibrated on the tenant's catalog when its text vectors were built (the highest "
        "nearest-product cosine of strings that name no product), reported in queryGraph.hybrid_floor.",
    )
    expand_stages: list[LexicalStage] = Field(
        default_factory=_expand_after_partial_matches,
        description="Lexical stages after which nearest products that matched no term may join.",
    )


class RankingConfig(_Strict):
    """Learned reranking in ``POST /search``: when the tenant has a trained ranker in use
    (``aisle ranker train``), it reorders the first ``candidates`` results of relevance-sorted text
    queries. See ``aisle.search.stages.rerank``."""

    enabled: bool = True
    candidates: Annotated[int, Field(ge=10, le=1000)] = 100


class GlobalConfiguration(_Strict):
    """``global_configuration.json``: tenant-wide search settings."""

    version: Literal[1] = 1
    display_name: str | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "USD"
    locale: str = "en"
    default_size: Annotated[int, Field(ge=1, le=100)] = 20
    max_size: Annotated[int, Field(ge=1, le=100)] = 100
    stages: StageConfig = Field(default_factory=StageConfig)
    synonyms: list[Synonym] = Field(default_factory=list)
    stop_words: list[str] = Field(
        default_factory=lambda: list(DEFAULT_STOP_WORDS),
        description="Words dropped from queries (unless the query has nothing else).",
    )
    price_ranges: list[PriceRange] = Field(
        default_factory=list, description="Buckets of the price facet; empty means derived from the catalog."
    )
    event_types: list[str] = Field(default_factory=lambda: ["view", "add_to_cart", "purchase"])
    hybrid: HybridConfig = Field(default_factory=HybridConfig)
    ranking: RankingConfig = Field(default_factory=RankingConfig)
    follow_up: FollowUpConfig = Field(default_factory=FollowUpConfig)
    stock: StockConfig = Field(default_factory=StockConfig)


class UserGroup(_Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    description: str = ""


class PersonalizationConfig(_Strict):
    enabled: bool = True
    brand_affinity_weight: Annotated[float, Field(ge=0, le=10)] = 0.3
    session_events: Annotated[int, Field(ge=0, le=1000)] = 50


class UserGroupConfiguration(_Strict):
    """``user_group_configuration.json``: user groups rules can target, and personalisation settings."""

    version: Literal[1] = 1
    groups: list[UserGroup] = Field(default_factory=list)
    personalization: PersonalizationConfig = Field(default_factory=PersonalizationConfig)


CONFIG_FILES: dict[str, type[BaseModel]] = {
    "attribute_configuration.json": AttributeConfiguration,
    "autocomplete_configuration.json": AutocompleteConfiguration,
    "crs_config.json": CrsConfig,
    "global_configuration.json": GlobalConfiguration,
    "user_group_configuration.json": UserGroupConfiguration,
}
