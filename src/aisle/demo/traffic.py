"""Simulated shoppers for the demo's analytics: a month of searches, clicks and purchases, labelled
simulated wherever they are shown.

Searches (Home Depot): each day's volume is drawn around :attr:`Traffic.searches_per_day` (weekends
busier), each search's query from the dev queries with repeats by a Zipf law (a fixed shuffle of the
queries, the query at rank r drawn with weight ``1 / r**zipf_s``), its visitor from a pool, its time
from a daily curve. The query is *searched for real* (``search`` callable: the demo tenant's engine with
its rules), so the products shown, the stage and the rules fired are Aisle's own. Clicks follow a
position-based click model (Craswell et al., WSDM 2008; Chuklin, Markov and de Rijke, *Click Models for
Web Search*, 2015, section 3.3): the product at position k is clicked with probability
``examination(k) * attractiveness(relevance)``, relevance from the judgments (unjudged: the lowest). A
click converts with a probability growing with relevance; a share of purchases carry no attribution
token (the visitor's purchase is attributed by the one-hour rule instead).

Recommendations are not simulated but replayed: real sessions of the tenant's own data (YooChoose
views, Complete Journey baskets), where the answer for each product viewed is Aisle's and a "click" is
the shopper's real next product when the answer showed it.

The click model's parameters live here and nowhere else: a learner evaluated on this traffic is never
handed them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np

from aisle.analytics.records import Answer, Outcome, Record, new_attribution_token
from aisle.core.events import EventName

HOURLY = np.array([1, 1, 1, 1, 1, 2, 3, 5, 6, 7, 7, 7, 8, 8, 7, 7, 7, 8, 10, 11, 10, 8, 5, 2], dtype=float)
"""Relative search volume per UTC hour of the day."""


@dataclass(frozen=True)
class ClickModel:
    """A position-based click model and a conversion model.

    Attributes:
        eta: examination of position k is ``1 / k**eta``.
        attractiveness: probability a shopper who looks at a product clicks it, per relevance 1..3
            (interpolated; an unjudged product counts as relevance 1).
        convert: probability a click converts, per relevance 1..3 (interpolated).
        untracked: share of purchases sent without an attribution token.
        depth: positions a shopper may look at.
    """

    eta: float = 0.9
    attractiveness: tuple[float, float, float] = (0.03, 0.25, 0.6)
    convert: tuple[float, float, float] = (0.01, 0.06, 0.15)
    untracked: float = 0.3
    depth: int = 20

    @staticmethod
    def _at(table: tuple[float, float, float], relevance: float) -> float:
        r = min(3.0, max(1.0, relevance))
        lo = math.floor(r) - 1
        hi = min(2, lo + 1)
        return table[lo] + (table[hi] - table[lo]) * (r - 1 - lo)

    def click_probability(self, position: int, relevance: float) -> float:
        """P(click) of the product at 1-based ``position`` with ``relevance`` (1..3)."""
        return (1.0 / position**self.eta) * self._at(self.attractiveness, relevance)

    def conversion_probability(self, relevance: float) -> float:
        return self._at(self.convert, relevance)


@dataclass(frozen=True)
class Shown:
    """What the search answered: products in shown order, total, normalised query, stage, rules fired."""

    product_ids: tuple[str, ...]
    total: int
    query: str
    stage: str
    rules: tuple[str, ...]


@dataclass(frozen=True)
class Traffic:
    """Volume and shape of the simulated searches.

    Attributes:
        days: how many days, ending the day before ``last_day``'s next day (``last_day`` included).
        searches_per_day: mean searches on a weekday (weekends 1.3x).
        visitors: size of the visitor pool; zipf_s: exponent of the query-repeat law.
        seed: the random generator's seed (the same seed, the same month).
    """

    last_day: date
    days: int = 28
    searches_per_day: int = 600
    visitors: int = 4000
    zipf_s: float = 1.07
    seed: int = 28


def _day_start(day: date) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def simulate_searches(
    tenant: str,
    queries: Sequence[str],
    judgments: dict[str, dict[str, float]],
    search: Callable[[str], Shown],
    price: Callable[[str], float],
    traffic: Traffic,
    model: ClickModel | None = None,
) -> Iterator[Record]:
    """Answers and events of the simulated month, in time order per search.

    Args:
        queries: the queries to draw from (their order is shuffled by the seed, then ranked by Zipf).
        judgments: ``{query: {product id: relevance 1..3}}``.
        search: runs one query for real and says what it showed.
        price: a product's price for purchases (the catalog's, or a stand-in for a catalog without one).
    """
    model = model or ClickModel()
    rng = np.random.default_rng(traffic.seed)
    order = list(queries)
    rng.shuffle(order)
    weights = 1.0 / np.arange(1, len(order) + 1) ** traffic.zipf_s
    weights /= weights.sum()
    hourly = HOURLY / HOURLY.sum()
    cache: dict[str, Shown] = {}
    for offset in range(traffic.days - 1, -1, -1):
        day = traffic.last_day - timedelta(days=offset)
        mean = traffic.searches_per_day * (1.3 if day.weekday() >= 5 else 1.0)
        count = int(rng.poisson(mean))
        hours = rng.choice(24, size=count, p=hourly)
        times = np.sort(_day_start(day) + hours * 3600 + rng.uniform(0, 3600, count))
        picks = rng.choice(len(order), size=count, p=weights)
        visitors = rng.zipf(1.3, count) % traffic.visitors
        for at, pick, visitor_n in zip(times, picks, visitors, strict=True):
            text = order[pick]
            shown = cache.get(text)
            if shown is None:
                shown = cache[text] = search(text)
            visitor = f"sim-{visitor_n:05d}"
            token = new_attribution_token()
            yield Answer(
                tenant,
                token,
                "search",
                float(at),
                shown.product_ids,
                shown.total,
                query=shown.query,
                stage=shown.stage,
                rules=shown.rules,
                sort="relevance",
                visitor_id=visitor,
            )
            yield from shopper_events(
                tenant, token, visitor, float(at), shown, judgments.get(text, {}), price, model, rng
            )


def shopper_events(
    tenant: str,
    token: str,
    visitor: str,
    at: float,
    shown: Shown,
    judged: dict[str, float],
    price: Callable[[str], float],
    model: ClickModel,
    rng: np.random.Generator,
) -> Iterator[Outcome]:
    """The clicks and purchases one simulated shopper makes on one answer."""
    for position, product in enumerate(shown.product_ids[: model.depth], start=1):
        relevance = judged.get(product, 1.0)
        if rng.random() >= model.click_probability(position, relevance):
            continue
        clicked = at + float(rng.uniform(2, 90))
        yield Outcome(
            tenant,
            f"sim-{token}-c{position}",
            EventName.CLICK.value,
            clicked,
            visitor,
            product,
            attribution_token=token,
            position=position,
        )
        if rng.random() < model.conversion_probability(relevance):
            tracked = rng.random() >= model.untracked
            yield Outcome(
                tenant,
                f"sim-{token}-p{position}",
                "purchase",
                clicked + float(rng.uniform(60, 1800)),
                visitor,
                product,
                attribution_token=token if tracked else None,
                quantity=float(1 + rng.poisson(0.3)),
                price=price(product),
            )


def replay_sessions(
    tenant: str,
    container_id: str,
    sessions: Sequence[Sequence[str]],
    recommend: Callable[[str], tuple[tuple[str, ...], tuple[str, ...]]],
    price: Callable[[str], float],
    traffic: Traffic,
    *,
    purchase_last: bool = False,
) -> Iterator[Record]:
    """Answers and events of real sessions replayed over the month, one answer per product viewed.

    ``recommend(product)`` gives the container's answer for a seed: ``(product ids, model ids)``. When
    the session's next product is in that answer, the shopper "clicks" it there; with
    ``purchase_last`` (baskets) every product after the seed that the answer showed is also bought.
    """
    rng = np.random.default_rng(traffic.seed + 1)
    first = _day_start(traffic.last_day - timedelta(days=traffic.days - 1))
    span = traffic.days * 86400.0
    for n, session in enumerate(sessions):
        visitor = f"replay-{container_id}-{n:06d}"
        at = first + float(rng.uniform(0, span - 3600))
        for i, seed in enumerate(session[:-1]):
            shown, models = recommend(seed)
            if not shown:
                continue
            token = new_attribution_token()
            at += float(rng.uniform(20, 120))
            yield Answer(
                tenant,
                token,
                "recommendations",
                at,
                shown,
                len(shown),
                container_id=container_id,
                models=models,
                visitor_id=visitor,
            )
            later = session[i + 1 :] if purchase_last else session[i + 1 : i + 2]
            for product in later:
                if product in shown:
                    position = shown.index(product) + 1
                    yield Outcome(
                        tenant,
                        f"replay-{token}-{position}",
                        EventName.CLICK.value,
                        at + 5,
                        visitor,
                        product,
                        attribution_token=token,
                        position=position,
                    )
                    if purchase_last:
                        yield Outcome(
                            tenant,
                            f"replay-{token}-{position}-p",
                            "purchase",
                            at + 60,
                            visitor,
                            product,
                            attribution_token=token,
                            quantity=1.0,
                            price=price(product),
                        )
