"""Vector, hybrid and image search benchmarks (issue 7).

Figures printed:
- vector search: server-side p50/p99 (Server-Timing) of ``POST /vector-search`` including the query
  embedding, on fashion and homedepot, one worker;
- hybrid retrieval: NDCG@10 on the Home Depot dev judgments, lexical only vs hybrid (blend, RRF);
- image search on fashion: 500 photos as queries (each excluded from its own results), share of the
  top 10 with the query's article type, gender and colour, through ``POST /images/search`` (server-side
  p50/p99 including decoding and embedding); and, for honesty, the same shares with the label probe
  fitted WITHOUT the 500 query photos (held out), and for plain cosine over the pooled features;
- embedding throughput (photos/s, decode + embed, batches of 32) and text embedding throughput.

The work directory (``AISLE_BENCH_VECTORS_DIR``, default ``var/bench-vectors``) is kept: catalogs are
imported once and embeddings computed once per catalog version (the first run embeds ~99k texts and
9,583 photos; later runs pay nothing).
"""

from __future__ import annotations

import os
import random
import statistics
import time
from pathlib import Path

import httpx
import numpy as np

from aisle.search.query import SearchQuery
from aisle.services.common.timing import app_ms
from bench.bench_search import fashion_queries
from bench.search_server import ServiceProcess

N_IMAGE_QUERIES = 500


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def _workdir() -> Path:
    default = Path(__file__).resolve().parents[1] / "var" / "bench-vectors"
    return Path(os.environ.get("AISLE_BENCH_VECTORS_DIR", default))


def setup(
    work: Path, data_dir: Path, wanted: tuple[str, ...] = ("fashion", "homedepot"), images: bool = True
) -> dict[str, str]:
    """Import the ``wanted`` demo tenants (once) and build their vectors (once per catalog version)."""
    from aisle.core.config import Settings
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs
    from aisle.demo.vectors import build_demo_vectors

    url = f"file://{work / 'bucket'}"
    tenants = Tenants(open_blob_store(url), ttl=0)
    import_demo_catalogs(tenants, work / "data", data_dir, only=wanted, if_missing=True, echo=print)
    start = time.perf_counter()
    build_demo_vectors(Settings(storage_url=url, data_dir=work / "data"), data_dir, images=images, echo=print)
    print(f"vectors ready in {time.perf_counter() - start:.1f} s")
    return {"AISLE_STORAGE_URL": url, "AISLE_DATA_DIR": str(work / "data"), "AISLE_AUTH": "off"}


def vector_latency(url: str, tenant: str, queries: list[str]) -> list[float]:
    """Server-side milliseconds of POST /vector-search (size 20, no facets) per query."""
    times = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for q in queries[:20]:  # warm-up
            client.post("/vector-search", json={"query": q, "tenant": tenant})
        for q in queries:
            resp = client.post("/vector-search", json={"query": q, "tenant": tenant})
            resp.raise_for_status()
            times.append(app_ms(resp.headers["server-timing"]))
    return times


def hybrid_ndcg(env: dict[str, str], data_dir: Path) -> None:
    """NDCG@10 on the Home Depot dev judgments: lexical, hybrid blend (default), RRF (in process)."""
    import dataclasses

    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.core.tenant_config import HybridConfig
    from aisle.search.evaluation import evaluate, load_judgments
    from aisle.search.indexes import IndexRegistry
    from aisle.search.pipeline import SearchPipeline, default_stages
    from aisle.vectors.search import VectorSearch
    from aisle.vectors.store import VectorStore

    tenants = Tenants(open_blob_store(env["AISLE_STORAGE_URL"]), ttl=3600)
    index = IndexRegistry(tenants, Path(env["AISLE_DATA_DIR"])).get("homedepot")
    config = tenants.config("homedepot")
    qrels = load_judgments(data_dir / "homedepot" / "judgments_dev.csv")
    vectors = VectorSearch(VectorStore(Path(env["AISLE_DATA_DIR"])))
    bound = default_stages(vectors=vectors)
    variants = {
        "lexical (hybrid off)": (SearchPipeline(budget_s=5.0), config),
        "hybrid (tenant default: blend 0.2)": (SearchPipeline(bound, budget_s=5.0), config),
    }
    for name, hybrid in [
        ("hybrid blend 0.3", HybridConfig(method="blend", blend_weight=0.3)),
        ("hybrid rrf k=60", HybridConfig(method="rrf")),
    ]:
        g = config.global_.model_copy(update={"hybrid": hybrid})
        variants[name] = (SearchPipeline(bound, budget_s=5.0), dataclasses.replace(config, global_=g))
    for name, (pipeline, cfg) in variants.items():

        def search(query: SearchQuery, pipeline: SearchPipeline = pipeline, cfg: object = cfg) -> list[str]:
            return [p["id"] for p in pipeline.search(index, cfg, query).products]  # type: ignore[arg-type]

        start = time.perf_counter()
        report = evaluate(search, qrels)
        print(
            f"homedepot NDCG@10 {name}: {report.ndcg10:.4f} over {report.queries} queries "
            f"({report.errors} errors, {time.perf_counter() - start:.0f} s)"
        )


def image_agreement(env: dict[str, str], data_dir: Path, url: str) -> None:
    """Top-10 label agreement and latency of image search on 500 fashion photos."""
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.search.indexes import IndexRegistry
    from aisle.vectors.ann import exact_search
    from aisle.vectors.image_build import PROBE_FIELDS, fit_probe
    from aisle.vectors.store import VectorStore

    tenants = Tenants(open_blob_store(env["AISLE_STORAGE_URL"]), ttl=3600)
    index = IndexRegistry(tenants, Path(env["AISLE_DATA_DIR"])).get("fashion")
    table = VectorStore(Path(env["AISLE_DATA_DIR"])).table("fashion", "image")
    ids = [i for i in table.ids if i is not None]
    rows = {i: index.rows[index.ord_by_id[i]] for i in ids}
    queries = random.Random(11).sample(ids, N_IMAGE_QUERIES)
    fields = ("article_type", "gender", "color")
    photos = data_dir / "fashion" / "images"

    def shares(results: dict[str, list[str]]) -> str:
        out = []
        for f in fields:
            agree = [
                sum(rows[r][f] == rows[q][f] for r in res) / max(len(res), 1) for q, res in results.items()
            ]
            out.append(f"{f} {statistics.mean(agree):.3f}")
        return ", ".join(out)

    over_http: dict[str, list[str]] = {}
    times = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for q in queries:
            resp = client.post(
                "/images/search",
                params={"tenant": "fashion", "size": 10, "exclude": q},
                files={"file": (f"{q}.jpg", (photos / f"{q}.jpg").read_bytes(), "image/jpeg")},
            )
            resp.raise_for_status()
            times.append(app_ms(resp.headers["server-timing"]))
            over_http[q] = [p["id"] for p in resp.json()["products"]]
    print(f"image search (served probe, fitted on the whole catalog): {shares(over_http)}")
    print(
        f"image search server-side incl. decode+embed: p50 {pct(times, 50):.1f} ms, "
        f"p99 {pct(times, 99):.1f} ms"
    )

    feats = np.load(table.path / "features.npy")
    key_of = {pid: k for k, pid in enumerate(ids)}
    qset = set(queries)
    train = [k for k, pid in enumerate(ids) if pid not in qset]
    labels = {f: [rows[ids[k]][f] for k in train] for f in PROBE_FIELDS if f in rows[ids[0]]}
    probe = fit_probe(feats[train], labels)
    for name, space in [("held-out probe", probe.transform(feats)), ("plain cosine", feats)]:
        keys = np.arange(len(ids))
        results = {}
        for q in queries:
            found = exact_search(space, keys, space[key_of[q]], 11)
            results[q] = [ids[k] for k in found.keys if ids[k] != q][:10]
        print(f"image search ({name}): {shares(results)}")


def throughput(env: dict[str, str], data_dir: Path) -> None:
    from PIL import Image

    from aisle.vectors.image_encoder import ImageEncoder
    from aisle.vectors.text_encoder import TextEncoder

    encoder = ImageEncoder.load(Path(env["AISLE_DATA_DIR"]), threads=2)
    files = sorted((data_dir / "fashion" / "images").iterdir())[:256]
    start = time.perf_counter()
    images = []
    for f in files:
        with Image.open(f) as im:
            im.load()
            images.append(im.copy())
    encoder.encode(images, batch_size=32)
    print(
        f"image embedding: {len(files) / (time.perf_counter() - start):.1f} photos/s "
        "(decode+embed, 2 threads)"
    )
    texts = (data_dir / "homedepot" / "products.csv").read_text().splitlines()[1:1025]
    text_encoder = TextEncoder.load(threads=2)
    start = time.perf_counter()
    text_encoder.encode(texts, batch_size=128)
    print(
        f"text embedding: {len(texts) / (time.perf_counter() - start):.1f} texts/s (MiniLM int8, 2 threads)"
    )


def main(data_dir: Path) -> None:
    work = _workdir()
    work.mkdir(parents=True, exist_ok=True)
    env = setup(work, data_dir)
    service = ServiceProcess("aisle.services.search.app", env, workers=1)
    try:
        service.wait_ready()
        fq = fashion_queries(data_dir, n=300)
        lines = (data_dir / "homedepot" / "queries_dev.txt").read_text().splitlines()
        hq = [q.strip() for q in lines if q.strip()]
        hq = random.Random(3).sample(hq, 300)
        for tenant, queries in (("fashion", fq), ("homedepot", hq)):
            times = vector_latency(service.url, tenant, queries)
            print(
                f"vector search {tenant}: server-side p50 {pct(times, 50):.1f} ms, "
                f"p99 {pct(times, 99):.1f} ms over {len(times)} queries (incl. MiniLM query embedding)"
            )
        if (Path(env["AISLE_DATA_DIR"]) / "vectors" / "fashion" / "image").is_dir():
            image_agreement(env, data_dir, service.url)
    finally:
        service.stop()
    hybrid_ndcg(env, data_dir)
    throughput(env, data_dir)
