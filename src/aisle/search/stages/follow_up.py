"""Guided search: one follow-up question for a broad search ("Which colour?"), and its answers.

When the tenant enables it (``global_configuration.json`` ``follow_up``, see
:mod:`aisle.core.follow_up_config`), a search that matches many products spread over several values of
an attribute the shopper has not narrowed yet carries a :class:`~aisle.search.model.FollowUp`: the
attribute, the question in the tenant's words and the most frequent values with their counts. The
answer is an ordinary filter, so the filters carry the conversation: every request filter on an
askable attribute counts as a question answered, and at most ``max_questions`` are asked per query.

Choosing the question (``chooser``):

- ``information_gain`` (Aisle's choice): the attribute whose question is worth most, in expected
  information about the product the shopper wants, taken uniform over the ``N`` matches. Offering the
  ``k`` most frequent values with counts ``n_1..n_k``, a shopper answering ``v`` narrows the matches to
  ``n_v``, a gain of ``log2(N / n_v)`` bits, and one whose value is not offered gains nothing, so the
  expected gain is ``sum_v (n_v / N) * log2(N / n_v)`` (the offered values' part of the Shannon entropy
  of the attribute over the matches; the information gain of a decision-tree split, as in ID3).
- ``first_facet``: the first askable attribute in the attribute configuration;
- ``most_values``: the askable attribute with most distinct values over the matches (counted up to the
  facets' 30).

The two baselines exist for ``bench/bench_guided_search.py``. Whatever the chooser, a question is asked
only when the search is broad: at least ``min_results`` matches, an attribute left with at least
``min_values`` values, and a best expected gain of at least ``min_gain_bits``; and never when the query
already names a product (:func:`names_product`): every query term together matched at most
:data:`NAMED_MATCHES` products and the query reads as the first one's name (the answer's other matches
come from a relaxed stage, "more like it"), or the first result's title is all in the query and the
second's is not. The counts come from
the facets stage's one aggregation over the matches (:class:`~aisle.search.stages.facets.Facets` counts
the candidates alongside the requested facets), so asking adds no second pass over the index.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aisle.catalog.schema import PATH_SEP
from aisle.core.follow_up_config import FollowUpConfig, QuestionChooser
from aisle.core.tenant_config import Attribute, AttributeRole, AttributeType
from aisle.search.context import SearchContext
from aisle.search.index.text_prep import searchable_text
from aisle.search.model import FollowUp, FollowUpCandidate, FollowUpGraph, FollowUpOption

ROUND_BITS = 4
# A query names a product when its words together match at most NAMED_MATCHES products and it reads as
# a product's name: NAMED_WORDS terms or more, NAMED_SHARE of them in the first title. A whole product
# name matched 1-2 fashion products; a broad query whose words seldom meet (a gender and an article
# type sold to few of it) still gains from a question over the relaxed stage's matches
# (bench_guided_search: with "fewer than min_results" alone, the simulated broad shoppers' MRR after
# one answer fell 0.0677 -> 0.0650).
NAMED_MATCHES = 5
NAMED_WORDS = 3
NAMED_SHARE = 0.75


@dataclass(frozen=True)
class Candidate:
    """An askable attribute's value counts over the matches (most frequent first) and its question's
    expected information gain (bits) when offering ``options``."""

    attribute: Attribute
    values: Sequence[tuple[str, int]]
    options: Sequence[tuple[str, int]]
    gain_bits: float


def expected_gain(counts: Sequence[int], total: int) -> float:
    """Expected information gain (bits) of offering values with ``counts`` among ``total`` matches:
    ``sum (n / N) * log2(N / n)`` over the offered counts (module docstring); 0 for ``total`` <= 0."""
    if total <= 0:
        return 0.0
    return sum(n / total * math.log2(total / n) for n in counts if 0 < n < total)


def candidate(
    attribute: Attribute, values: Sequence[tuple[str, int]], total: int, config: FollowUpConfig
) -> Candidate:
    """``attribute`` as a question over ``total`` matches with ``values`` (value, count) counted: the
    ``max_options`` most frequent values are offered."""
    ordered = sorted((v for v in values if v[1] > 0), key=lambda v: -v[1])
    options = ordered[: config.max_options]
    return Candidate(attribute, ordered, options, expected_gain([n for _, n in options], total))


def _by_gain(candidates: Sequence[Candidate]) -> Candidate:
    return max(candidates, key=lambda c: c.gain_bits)  # max keeps the first of equals: config order


def _first(candidates: Sequence[Candidate]) -> Candidate:
    return candidates[0]


def _most_values(candidates: Sequence[Candidate]) -> Candidate:
    return max(candidates, key=lambda c: len(c.values))


CHOOSERS: dict[QuestionChooser, Callable[[Sequence[Candidate]], Candidate]] = {
    "information_gain": _by_gain,
    "first_facet": _first,
    "most_values": _most_values,
}
"""How each ``follow_up.chooser`` picks among the candidates (given in attribute-configuration order)."""


def choose(candidates: Sequence[Candidate], config: FollowUpConfig) -> tuple[Candidate | None, str]:
    """The question to ask among ``candidates`` (configuration order) and the reason: ``asked``,
    ``no_attribute`` (none with ``min_values`` values) or ``low_gain`` (best gain < ``min_gain_bits``)."""
    open_ = [c for c in candidates if len(c.options) >= config.min_values]
    if not open_:
        return None, "no_attribute"
    if _by_gain(open_).gain_bits < config.min_gain_bits:
        return None, "low_gain"
    return CHOOSERS[config.chooser](open_), "asked"


def answered(ctx: SearchContext) -> int:
    """Questions the request already answered: its filters on distinct askable attributes."""
    askable = {a.name for a in ctx.config.attributes.attributes if a.askable}
    return len({f.field for f in ctx.query.filters} & askable)


def open_attributes(ctx: SearchContext) -> list[Attribute]:
    """Askable attributes the search has not narrowed: no filter on them (request or rule) and none
    of their values named in the query, in attribute-configuration order."""
    narrowed = {f.field for f in ctx.retrieval.filters}
    if ctx.graph is not None:
        narrowed |= {m.field for m in ctx.graph.attributes}
    return [a for a in ctx.config.attributes.attributes if a.askable and a.name not in narrowed]


def _label(attribute: Attribute, value: str) -> str:
    return value.rsplit(PATH_SEP, 1)[-1] if attribute.type is AttributeType.category_path else value


def names_product(ctx: SearchContext, min_results: int) -> str | None:
    """Why the query already names a product, or None. Both readings need the first result's title
    (its analysed words, stop words left out): ``strict_few`` when the ``strict`` stage (every term)
    matched at most :data:`NAMED_MATCHES` products (fewer than ``min_results``; none when a recognised
    attribute filtered its own product out), the query has at
    least :data:`NAMED_WORDS` terms and :data:`NAMED_SHARE` of them are in that title (a product's
    name, not a category whose words seldom meet: "women waistcoat", "men perfume and body mist");
    ``title_match`` when every word of the first title is a query word (analysed, any alternative's)
    and not every word of the second's."""
    graph, hits, index = ctx.graph, ctx.output.hits, ctx.index
    groups = ctx.understanding.term_groups
    searchable = [a for a in index.config.attributes if a.searchable]
    title = next((k for k, a in enumerate(searchable) if a.role is AttributeRole.title), None)
    if graph is None or not groups or not hits or title is None or title >= len(index.searchable):
        return None
    first = _title_terms(ctx, title, hits[0].ord)
    strict = next((t for t in graph.stages_tried if t.get("stage") == "strict"), None)
    matched = int(strict.get("hits", 0)) if strict is not None else 0  # type: ignore[call-overload]
    if strict is not None and matched <= min(NAMED_MATCHES, min_results - 1) and len(groups) >= NAMED_WORDS:
        in_title = sum(1 for g in groups if any(set(alt.split(" ")) <= first for alt in g))
        if in_title >= NAMED_SHARE * len(groups):
            return "strict_few"
    words = set(ctx.understanding.terms)
    words.update(w for group in groups for alt in group for w in alt.split(" "))
    if not first or not first <= words:
        return None
    if len(hits) > 1 and _title_terms(ctx, title, hits[1].ord) <= words:
        return None  # the second result's title is in the query too: the query names no one product
    return "title_match"


def _title_terms(ctx: SearchContext, column: int, ord_: int) -> set[str]:
    """The words of catalog row ``ord_``'s title as the index holds them (normalised, so "n231" is "n"
    and "231" as in the query, then analysed), stop words left out."""
    value = ctx.index.searchable[column][ord_]
    stop = {w.lower() for w in ctx.config.global_.stop_words}
    return {t for t in ctx.index.analyze(searchable_text(value)) if t not in stop} if value else set()


def question_of(attribute: Attribute) -> str:
    """The tenant's wording (``Attribute.question``), else ``Which <name>?`` from the field's name."""
    return attribute.question or f"Which {attribute.name.replace('_', ' ')}?"


class AskFollowUp:
    """Sets ``ctx.output.follow_up`` for a broad search and ``ctx.graph.follow_up`` to why (or why not)."""

    def counted_attributes(self, ctx: SearchContext) -> list[str]:
        """The attributes the facets stage should count for this search: none unless it may ask."""
        config = ctx.config.global_.follow_up
        if (
            not config.enabled
            or not ctx.query.follow_up
            or ctx.output.total < config.min_results
            or answered(ctx) >= config.max_questions
            or ctx.past_deadline()
            or _named(ctx, config) is not None
        ):
            return []
        return [a.name for a in open_attributes(ctx)]

    def run(self, ctx: SearchContext) -> SearchContext:
        config = ctx.config.global_.follow_up
        if not config.enabled or not ctx.query.follow_up or ctx.graph is None:
            return ctx
        done = answered(ctx)
        graph = FollowUpGraph(asked=False, reason="asked", chooser=config.chooser, answered=done)
        ctx.graph.follow_up = graph
        if ctx.output.external is not None:
            graph.reason = "external"
            return ctx
        if ctx.output.total < config.min_results:
            graph.reason = "few_results"
            return ctx
        if done >= config.max_questions:
            graph.reason = "max_questions"
            return ctx
        named = _named(ctx, config)
        if named is not None:
            graph.reason = named
            return ctx
        attributes = open_attributes(ctx)
        counted = ctx.output.value_counts
        if any(a.name not in counted for a in attributes):
            graph.reason = "deadline"  # the facets stage was past the deadline: they were not counted
            return ctx
        candidates = [candidate(a, counted[a.name], ctx.output.total, config) for a in attributes]
        graph.candidates = [  # built by this stage, valid by construction: not validated again
            FollowUpCandidate.model_construct(
                attribute=c.attribute.name, gain_bits=round(c.gain_bits, ROUND_BITS), values=len(c.values)
            )
            for c in sorted(candidates, key=lambda c: -c.gain_bits)
        ]
        chosen, graph.reason = choose(candidates, config)
        if chosen is None:
            return ctx
        graph.asked, graph.attribute = True, chosen.attribute.name
        ctx.output.follow_up = FollowUp.model_construct(
            attribute=chosen.attribute.name,
            question=question_of(chosen.attribute),
            options=[
                FollowUpOption.model_construct(value=v, label=_label(chosen.attribute, v), count=n)
                for v, n in chosen.options
            ],
            number=done + 1,
        )
        return ctx


def _named(ctx: SearchContext, config: FollowUpConfig) -> str | None:
    """:func:`names_product` once per search (the facets stage asks first, then the question), or None
    when ``skip_named_products`` is off."""
    if not config.skip_named_products:
        return None
    if not ctx.output.named_checked:
        ctx.output.named_product = names_product(ctx, config.min_results)
        ctx.output.named_checked = True
    return ctx.output.named_product
