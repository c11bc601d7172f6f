"""Guided search on fashion: one follow-up question for broad queries, measured on SIMULATED shoppers.

Issue 33's evaluation (the standard one of conversational product search): 2,000 target products are
drawn from the fashion catalog; each simulated shopper types a broad query made of the target's article
type (and its gender where the catalog has that article type for more than one gender), then answers
every follow-up question truthfully with the target's value (a shopper whose value is not among the
options offered cannot answer and stops). After 0, 1 and 2 answers it reports:

- MRR@1000: the target's reciprocal rank in the first 1,000 results (0 beyond);
- share@10: the share of the first 10 hits matching every attribute the shopper answered by the end of
  the conversation (over the shoppers who answered at least one question);
- the mean results count;

for three ways of choosing the question (the tenant setting ``follow_up.chooser``): the first askable
facet in the attribute configuration, the askable facet with most values over the matches, and Aisle's
choice (expected information gain). Whether a question is asked at all (the search is broad) is the same
rule for all three. Every search runs through the search engine's own pipeline, in process.

Known items (issue 43): :data:`KNOWN_ITEMS` product names typed whole, the share that asks a question
and the product's MRR, with and without the check that a query already names a product; and the
broad shoppers' MRR with and without it.

Cost: search latency in process with guided search on and off, on the same queries with three facets
(``brand,color,price`` as ``bench_search``), interleaved; p50 and p99 (ms) over all queries and over
those that asked. ``python -m bench --only bench_guided_search``.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aisle.core.tenancy import TenantConfig
from aisle.search.engine import SearchEngine
from aisle.search.model import FilterSpec, FollowUp
from aisle.search.query import SearchQuery

SHOPPERS = 2000
DEPTH = 1000
ANSWERS = 2
CHOOSERS = {
    "first_facet": "first configured facet",
    "most_values": "facet with most values",
    "information_gain": "Aisle's choice (info gain)",
}
FACETS = ("brand", "color", "price")


@dataclass
class Conversation:
    """One simulated shopper's searches: per step the result ids (first ``DEPTH``) and count."""

    target: dict[str, Any]
    query: str
    steps: list[tuple[list[str], int]] = field(default_factory=list)
    answered: dict[str, str] = field(default_factory=dict)


def _setup(tmp: Path, data_dir: Path) -> tuple[SearchEngine, TenantConfig]:
    from aisle.core.config import Settings
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs

    url = f"file://{tmp / 'bucket'}"
    store = open_blob_store(url)
    import_demo_catalogs(Tenants(store, ttl=0), tmp / "data", data_dir, only=("fashion",), echo=print)
    settings = Settings(storage_url=url, data_dir=tmp / "data", auth="off")
    engine = SearchEngine.from_settings(settings, store)
    return engine, engine.tenants.config("fashion")


def with_chooser(
    config: TenantConfig, chooser: str, *, enabled: bool = True, skip_named: bool = True
) -> TenantConfig:
    """``config`` with guided search's chooser (and on/off, and whether a query naming a product is
    asked nothing) replaced: the bench's only knobs."""
    update = {"chooser": chooser, "enabled": enabled, "skip_named_products": skip_named}
    follow_up = config.global_.follow_up.model_copy(update=update)
    return replace(config, global_=config.global_.model_copy(update={"follow_up": follow_up}))


def shoppers(rows: list[dict[str, Any]], n: int, seed: int = 33) -> list[tuple[dict[str, Any], str]]:
    """``n`` targets drawn from the catalog, each with its broad query: the article type, preceded by
    the gender when the catalog has that article type for more than one gender."""
    genders: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if row.get("article_type") and row.get("gender"):
            genders[row["article_type"]].add(row["gender"])
    usable = [r for r in rows if r.get("article_type") and r.get("gender")]
    drawn = random.Random(seed).sample(usable, n)
    out = []
    for row in drawn:
        words = (
            [row["gender"], row["article_type"]]
            if len(genders[row["article_type"]]) > 1
            else [row["article_type"]]
        )
        out.append((row, " ".join(words).lower()))
    return out


class Searcher:
    """The engine's pipeline on fashion with one chooser, cached per (query, filters): shoppers with
    the same query and answers see the same results."""

    def __init__(self, engine: SearchEngine, config: TenantConfig) -> None:
        self.engine, self.config = engine, config
        self.index = engine.indexes.get("fashion", config=config)
        self._cache: dict[
            tuple[str, tuple[tuple[str, str], ...]], tuple[list[str], int, FollowUp | None]
        ] = {}

    def search(self, text: str, answers: dict[str, str]) -> tuple[list[str], int, FollowUp | None]:
        key = (text, tuple(answers.items()))
        if key not in self._cache:
            filters = [FilterSpec(field=f, value=v) for f, v in answers.items()]
            ctx = self.engine.pipeline.run(
                self.index, self.config, SearchQuery(text=text, size=DEPTH, filters=filters)
            )
            ids = [self.index.rows[h.ord]["id"] for h in ctx.output.hits]
            self._cache[key] = (ids, int(ctx.output.total), ctx.output.follow_up)
        return self._cache[key]


def _answer(target: dict[str, Any], follow_up: FollowUp) -> str | None:
    """The target's own value among the options (a category option is a path the target lies under)."""
    own = str(target.get(follow_up.attribute, ""))
    for option in follow_up.options:
        if own == option.value or own.startswith(option.value + " > "):
            return option.value
    return None


def converse(searcher: Searcher, target: dict[str, Any], query: str) -> Conversation:
    """A simulated shopper's conversation: search, then answer up to ``ANSWERS`` questions truthfully."""
    talk = Conversation(target, query)
    for _ in range(ANSWERS + 1):
        ids, total, follow_up = searcher.search(query, talk.answered)
        talk.steps.append((ids, total))
        if len(talk.steps) > ANSWERS:
            break
        value = _answer(target, follow_up) if follow_up is not None else None
        if value is None:  # not asked, or the shopper's value is not offered: the results stay
            talk.steps.extend([(ids, total)] * (ANSWERS + 1 - len(talk.steps)))
            break
        talk.answered[follow_up.attribute] = value  # type: ignore[union-attr]
    return talk


def _matches(row: dict[str, Any], answered: dict[str, str]) -> bool:
    return all(
        str(row.get(f, "")) == v or str(row.get(f, "")).startswith(v + " > ") for f, v in answered.items()
    )


def step_figures(talks: list[Conversation], step: int, rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    """MRR@1000, share@10 (shoppers who answered) and mean results count after ``step`` answers."""
    rr, share, totals = [], [], []
    for talk in talks:
        ids, total = talk.steps[step]
        rank = ids.index(talk.target["id"]) + 1 if talk.target["id"] in ids else None
        rr.append(1 / rank if rank else 0.0)
        totals.append(total)
        if talk.answered and ids[:10]:
            share.append(sum(_matches(rows[i], talk.answered) for i in ids[:10]) / len(ids[:10]))
    return {
        "mrr": statistics.fmean(rr),
        "share10": statistics.fmean(share) if share else 0.0,
        "results": statistics.fmean(totals),
        "answered_any": sum(1 for t in talks if t.answered) / len(talks),
    }


def evaluate(
    engine: SearchEngine, config: TenantConfig, targets: list[tuple[dict[str, Any], str]]
) -> dict[str, list[dict[str, float]]]:
    """Each chooser's figures after 0..``ANSWERS`` answers (see the module docstring)."""
    rows = {r["id"]: r for r in engine.indexes.get("fashion", config=config).rows}
    figures = {}
    for chooser in CHOOSERS:
        searcher = Searcher(engine, with_chooser(config, chooser))
        talks = [converse(searcher, target, query) for target, query in targets]
        figures[chooser] = [step_figures(talks, step, rows) for step in range(ANSWERS + 1)]
    return figures


def print_table(figures: dict[str, list[dict[str, float]]], n: int) -> None:
    print(f"\nguided search on fashion, {n} SIMULATED shoppers (truthful answers), MRR@{DEPTH}")
    print(f"{'chooser':<28} {'answers':>7} {'MRR':>8} {'share@10':>9} {'results':>8} {'answered':>9}")
    for chooser, label in CHOOSERS.items():
        for step, f in enumerate(figures[chooser]):
            print(
                f"{label:<28} {step:>7} {f['mrr']:>8.4f} {f['share10']:>9.3f} {f['results']:>8.0f} "
                f"{f['answered_any']:>9.1%}"
            )
    base, ours = figures["information_gain"][0]["mrr"], figures["information_gain"][1]["mrr"]
    best_baseline = max(figures[c][1]["mrr"] for c in ("first_facet", "most_values"))
    print(
        f"simulated: Aisle's choice after one answer: MRR x{ours / base:.2f} over no question "
        f"(goal x2), {ours / best_baseline:.2f}x the better baseline's"
    )
    print("(share@10: over shoppers who answered at least one question, against all they answered)")


KNOWN_ITEMS = 500


def known_items(engine: SearchEngine, config: TenantConfig, rows: list[dict[str, Any]]) -> None:
    """Known-item queries (a product's whole name, as a shopper who knows what she wants types it):
    the share that asks a question and the MRR@1000 of the named product, with the check that a query
    names a product (``follow_up.skip_named_products``) off (before issue 43) and on."""
    named = [r for r in rows if r.get("title") and len(str(r["title"]).split()) >= 3]
    drawn = random.Random(43).sample(named, KNOWN_ITEMS)
    print(f"\nknown-item queries on fashion: {len(drawn)} product names (whole), MRR@{DEPTH} of the product")
    print(f"{'check':<34} {'asked':>7} {'MRR':>8}  reasons")
    for label, skip in (("off (before issue 43)", False), ("on: a query naming a product", True)):
        searcher = Searcher(engine, with_chooser(config, "information_gain", skip_named=skip))
        asked, rr, reasons = 0, [], defaultdict(int)
        for row in drawn:
            ctx = engine.pipeline.run(
                searcher.index, searcher.config, SearchQuery(text=str(row["title"]).lower(), size=DEPTH)
            )
            ids = [searcher.index.rows[h.ord]["id"] for h in ctx.output.hits]
            rr.append(1 / (ids.index(row["id"]) + 1) if row["id"] in ids else 0.0)
            asked += ctx.output.follow_up is not None
            graph = ctx.graph.follow_up if ctx.graph is not None else None
            reasons[graph.reason if graph is not None else "off"] += 1
        top = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:4])
        print(f"{label:<34} {asked / len(drawn):>7.1%} {statistics.fmean(rr):>8.4f}  {top}")


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def latency(engine: SearchEngine, config: TenantConfig, queries: list[str], rounds: int = 5) -> None:
    """Search wall time in process, guided search on and off, interleaved per query (ms)."""
    on, off = (
        with_chooser(config, "information_gain"),
        with_chooser(config, "information_gain", enabled=False),
    )
    times: dict[str, list[float]] = {"on": [], "off": [], "on_asked": [], "off_asked": []}
    asked = set()
    for q in queries[:50]:  # warm-up
        engine.search("fashion", SearchQuery(text=q, facets=FACETS), config=on)
    for r in range(rounds):
        for q in queries:
            order = [("on", on), ("off", off)] if r % 2 == 0 else [("off", off), ("on", on)]
            for name, cfg in order:
                start = time.perf_counter()
                result = engine.search("fashion", SearchQuery(text=q, facets=FACETS), config=cfg)
                ms = (time.perf_counter() - start) * 1000
                times[name].append(ms)
                if name == "on" and result.follow_up is not None:
                    asked.add(q)
                if q in asked:
                    times[f"{name}_asked"].append(ms)
    print(
        f"\nsearch latency in process (fashion, facets {','.join(FACETS)}, {len(queries)} queries x {rounds})"
    )
    for subset in ("", "_asked"):
        a, b = times[f"off{subset}"], times[f"on{subset}"]
        if not a or not b:
            continue
        label = "queries that asked" if subset else "all queries"
        print(
            f"{label:<20} off p50 {_pct(a, 50):.2f} p99 {_pct(a, 99):.2f} | on p50 {_pct(b, 50):.2f} "
            f"p99 {_pct(b, 99):.2f} ms | p99 ratio {_pct(b, 99) / _pct(a, 99):.3f}"
        )


def main(data_dir: Path) -> None:
    from bench.bench_search import fashion_queries

    with tempfile.TemporaryDirectory() as tmp:
        engine, config = _setup(Path(tmp), data_dir)
        rows = engine.indexes.get("fashion", config=config).rows
        targets = shoppers(list(rows), SHOPPERS)
        start = time.perf_counter()
        figures = evaluate(engine, config, targets)
        print(f"(simulation took {time.perf_counter() - start:.1f} s)")
        print_table(figures, len(targets))
        before = Searcher(engine, with_chooser(config, "information_gain", skip_named=False))
        talks = [converse(before, target, query) for target, query in targets]
        by_id = {r["id"]: r for r in rows}
        old = [step_figures(talks, step, by_id)["mrr"] for step in range(ANSWERS + 1)]
        new = [f["mrr"] for f in figures["information_gain"]]
        print(
            "simulated broad queries, Aisle's choice, MRR after 0/1/2 answers: "
            f"without the named-product check {' / '.join(f'{m:.4f}' for m in old)}, "
            f"with it {' / '.join(f'{m:.4f}' for m in new)}"
        )
        known_items(engine, config, list(rows))
        broad = sorted({q for _, q in targets})
        latency(engine, config, broad + fashion_queries(data_dir, 300))
