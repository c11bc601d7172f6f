"""Keystroke to rendered hits in the storefront (/shop/), in Debian's chromium through Playwright.

200 queries typed key by key (60 ms between keys, a fast typist): 100 Home Depot dev queries on the
homedepot shop and 100 fashion queries (brand and article type of every 150th product, distinct) on
the fashion shop. For each keystroke the page records the time from the keydown to the frame after
InstantSearch rendered the hits of that exact input; a keystroke whose answer a later one overtook
renders nothing and is counted apart. Printed: p50 and p99 over all rendered keystrokes, and over the
last keystroke of each query (what the shopper waits for).

Against a running ``make run`` with ``AISLE_SHOP_URL=http://127.0.0.1:8080``; without it, the search
service of this process (auth on) over the demo catalogs imported to a temporary directory.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

CHROMIUM = Path("/usr/bin/chromium")
KEY_DELAY_MS = 60
PER_TENANT = 100

PROBE = """
window.__lat = []; window.__pending = new Map();
document.addEventListener('keydown', () => { window.__kd = performance.now(); }, true);
document.addEventListener('input', (e) => {  // the text a keystroke produced, timed from its keydown
  if (e.target.id !== 'q' || window.__kd === null || !e.target.value) return;
  window.__pending.set(e.target.value, window.__kd);
  window.__kd = null;
}, true);
document.addEventListener('DOMContentLoaded', () => new MutationObserver(() => {
  const q = document.body.dataset.renderedQuery;
  if (!window.__pending.has(q)) return;
  const t0 = window.__pending.get(q); window.__pending.delete(q);
  requestAnimationFrame(() => window.__lat.push([q, performance.now() - t0]));
}).observe(document.body, { attributes: true, attributeFilter: ['data-rendered-query'] }));
"""


def queries(data_dir: Path) -> dict[str, list[str]]:
    home = [
        q.strip() for q in (data_dir / "homedepot" / "queries_dev.txt").read_text().splitlines() if q.strip()
    ]
    fashion: list[str] = []
    with gzip.open(data_dir / "fashion" / "products.jsonl.gz") as fh:
        for i, line in enumerate(fh):
            if i % 150 == 0:
                row = json.loads(line)  # the catalog has NaN prices, which orjson refuses
                q = f"{row.get('brand') or ''} {row.get('article_type') or ''}".strip().lower()
                if q and q not in fashion:
                    fashion.append(q)
    return {"homedepot": home[:PER_TENANT], "fashion": fashion[:PER_TENANT]}


@contextmanager
def local_shop(data_dir: Path) -> Iterator[str]:
    from tests.support.auth import AuthKit, serve

    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs
    from aisle.services.search.app import create_app

    with tempfile.TemporaryDirectory(prefix="bench-shop-") as tmp:
        url = f"file://{tmp}/bucket"
        store = open_blob_store(url)
        import_demo_catalogs(
            Tenants(store, ttl=0), Path(tmp) / "data", data_dir, only=["fashion", "homedepot"]
        )
        kit = AuthKit(store, auth_url="http://127.0.0.1:9")
        settings = kit.settings(
            storage_url=url, data_dir=Path(tmp) / "data", photos_dir=data_dir, storefront_tenants="*"
        )
        with serve(create_app(settings)) as base:
            yield base


def measure(base: str, data_dir: Path) -> None:
    from playwright.sync_api import sync_playwright

    rendered: list[float] = []
    final: list[float] = []
    keys = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
        )
        for tenant, typed in queries(data_dir).items():
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.add_init_script(PROBE)
            page.goto(f"{base}/shop/?tenant={tenant}")
            page.wait_for_selector("[data-testid=hit]")
            for q in typed:
                page.evaluate("window.__lat = []; window.__pending.clear(); window.__kd = null")
                page.fill("#q", "")
                page.wait_for_function("document.body.dataset.renderedQuery === ''")
                page.type("#q", q, delay=KEY_DELAY_MS)
                page.wait_for_function("(q) => window.__lat.some(([x]) => x === q)", arg=q, timeout=30_000)
                lat = page.evaluate("window.__lat")
                keys += len(q)
                rendered.extend(ms for _, ms in lat)
                final.extend(ms for x, ms in lat if x == q)
            page.close()
        browser.close()
    r, f = np.array(rendered), np.array(final)
    print(f"keystrokes typed: {keys}; rendered: {len(r)} (the others overtaken by a later keystroke)")
    print(
        f"keystroke -> rendered hits, every rendered keystroke: p50 {np.percentile(r, 50):.1f} ms, "
        f"p99 {np.percentile(r, 99):.1f} ms"
    )
    print(
        f"last keystroke of each of {len(f)} queries -> its hits: p50 {np.percentile(f, 50):.1f} ms, "
        f"p99 {np.percentile(f, 99):.1f} ms"
    )


def main(data_dir: Path) -> None:
    if not CHROMIUM.exists():
        print(f"skipped: no chromium at {CHROMIUM}")
        return
    url = os.environ.get("AISLE_SHOP_URL")
    if url:
        print(f"storefront at {url} (a running make run)")
        measure(url.rstrip("/"), data_dir)
        return
    with local_shop(data_dir) as base:
        print(f"storefront of this process's search service at {base} (auth on, 1 worker)")
        measure(base, data_dir)
