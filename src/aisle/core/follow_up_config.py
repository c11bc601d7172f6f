"""Guided search settings (``global_configuration.json``, ``follow_up``): when a search is broad enough
to ask the shopper one follow-up question ("Which colour?"), and how the question is chosen.

The state of the conversation is carried by the request's filters alone: an answer is an ordinary
filter on the attribute asked about, and every request filter on an askable attribute counts as a
question answered (so any replica can answer, with no session to share). Example::

    {"follow_up": {"enabled": true, "min_results": 40, "max_questions": 2}}

Which attributes may be asked about, and in which words, is the attribute configuration's part
(``Attribute.ask`` and ``Attribute.question``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

QuestionChooser = Literal["information_gain", "first_facet", "most_values"]


class FollowUpConfig(BaseModel):
    """When a search answer carries a ``followUp`` question (see the module docstring).

    A search is *broad* when it matches at least ``min_results`` products and some askable attribute
    not yet filtered shows at least ``min_values`` distinct values over them, and the chosen question
    is worth at least ``min_gain_bits`` of expected information (``information_gain`` chooser only).
    ``max_questions`` bounds the questions of one query (counted from the filters on askable
    attributes); ``max_options`` the answers offered (the most frequent values, 2..8).
    ``chooser``: ``information_gain`` (Aisle's choice), or the two baselines the guided-search bench
    compares it with, ``first_facet`` (the first askable attribute in the configuration) and
    ``most_values`` (the askable attribute with most distinct values over the matches).
    ``skip_named_products``: no question for a query that already names a product
    (:func:`aisle.search.stages.follow_up.names_product`; on by default, off for the bench's before).
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    min_results: Annotated[int, Field(ge=2, le=1_000_000)] = 40
    min_values: Annotated[int, Field(ge=2, le=8)] = 2
    max_options: Annotated[int, Field(ge=2, le=8)] = 6
    max_questions: Annotated[int, Field(ge=0, le=8)] = 2
    min_gain_bits: Annotated[float, Field(ge=0, le=10)] = 0.5
    chooser: QuestionChooser = "information_gain"
    skip_named_products: bool = Field(
        default=True,
        description="Ask nothing when the query already names a product: all its words together match "
        "at most 5 products and it reads as the first one's name, or the first result's title is all in "
        "the query.",
    )

    @model_validator(mode="after")
    def _check(self) -> FollowUpConfig:
        if self.min_values > self.max_options:
            raise ValueError("min_values cannot exceed max_options")
        return self
