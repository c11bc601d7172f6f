"""FREQUENTLY_BOUGHT_TOGETHER at the generated tenant's size (issue 42), on SYNTHETIC baskets.

The model trains on purchase lines (``basket_id, item_id, ts``), which a generated catalog does not
have, and ``aisle train`` reads Complete Journey's grocery lines whatever the tenant. So this measures
the model's own build (:func:`aisle.recs.models.bought_together.train_bought_together`) over baskets
drawn at random over the generated catalog, to show how its time and memory grow with the catalog; the
baskets say nothing about quality (no figure here is one).

Synthetic baskets (seeded, :func:`synthetic_lines`): ``products * BASKETS_PER_PRODUCT`` baskets, sizes
1 + Poisson(2) items (Complete Journey's mean basket holds about 3 distinct products in a category mix
like this); each basket's first item drawn by a Zipf-like popularity (rank ** -0.8 over a random
order of the products), each further item from the same article type as the first with probability
:data:`SAME_TYPE`, else by the same popularity; times uniform over 52 weeks. Categories are the
products' article types.

Run as a child (``python -m bench.scale_fbt CATALOG``) so its peak RSS is its own (``wait4``); it prints
one JSON line: lines, baskets, items, seconds to draw the baskets and to train, partners kept.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson
import polars as pl

BASKETS_PER_PRODUCT = 2
SAME_TYPE = 0.6
SEED = 7


def synthetic_lines(catalog: pl.DataFrame, seed: int = SEED) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(lines ``basket_id, item_id, ts``, categories ``item_id, category``) of the synthetic baskets
    over ``catalog`` (``id``, ``article_type``), as the module says."""
    rng = np.random.default_rng(seed)
    n = catalog.height
    ids = catalog["id"].to_numpy()
    types = catalog["article_type"].fill_null("?").cast(pl.Categorical).to_physical().to_numpy()
    weight = np.empty(n)
    weight[rng.permutation(n)] = np.arange(1, n + 1, dtype=np.float64) ** -0.8
    cdf = np.cumsum(weight / weight.sum())
    baskets = n * BASKETS_PER_PRODUCT
    sizes = 1 + rng.poisson(2.0, baskets)
    first = np.minimum(np.searchsorted(cdf, rng.random(baskets)), n - 1)
    basket = np.repeat(np.arange(baskets, dtype=np.int64), sizes)
    lead = np.repeat(first, sizes)
    order = np.argsort(types, kind="stable")  # rows of one type are one run of ``order``
    starts = np.searchsorted(types[order], types)  # per row: where its type's run starts
    counts = np.bincount(types)[types]
    same = rng.random(len(basket)) < SAME_TYPE
    within = order[starts[lead] + (rng.random(len(basket)) * counts[lead]).astype(np.int64)]
    anywhere = np.minimum(np.searchsorted(cdf, rng.random(len(basket))), n - 1)
    item = np.where(same, within, anywhere)
    item[np.r_[0, np.cumsum(sizes)[:-1]]] = first  # each basket's first line is its lead item
    ts = rng.uniform(0, 52 * 7 * 86400, baskets).astype(np.int64)
    lines = pl.DataFrame({"basket_id": basket, "item_id": ids[item], "ts": ts[basket]})
    categories = pl.DataFrame({"item_id": ids, "category": catalog["article_type"].fill_null("?")})
    return lines, categories


@dataclass
class FbtRun:
    """The synthetic baskets' lines and baskets, the trainer's seconds and the child's peak RSS (MiB)."""

    lines: int
    baskets: int
    draw_s: float
    train_s: float
    peak_mib: float
    partners: int


def measure(catalog: Path, env: dict[str, str]) -> FbtRun:
    """Run this module as a child over the generated ``catalog`` (Parquet). Raises RuntimeError."""
    from bench.scale_measure import run_cli

    _, peak, output = run_cli([str(catalog)], env, module="bench.scale_fbt")
    found = orjson.loads(output.strip().splitlines()[-1])
    f = found
    return FbtRun(f["lines"], f["baskets"], f["draw_s"], f["train_s"], peak, f["partners"])


def main(argv: list[str]) -> int:
    from aisle.recs.models.bought_together import train_bought_together

    catalog = pl.read_parquet(argv[0], columns=["id", "article_type"])
    start = time.perf_counter()
    lines, categories = synthetic_lines(catalog)
    drawn = time.perf_counter() - start
    del catalog
    start = time.perf_counter()
    model = train_bought_together(lines, categories)
    trained = time.perf_counter() - start
    figures = {
        "lines": lines.height,
        "baskets": int(lines["basket_id"].n_unique()),
        "items": len(model.items),
        "draw_s": drawn,
        "train_s": trained,
        "partners": len(model.nb_idx),
    }
    print(orjson.dumps(figures).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
