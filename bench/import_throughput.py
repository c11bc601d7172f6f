"""Full import throughput: a tenant's whole catalog upserted in one request, products a second.

Aisle: ``POST /catalog/import?reconciliation=incremental`` with the catalog file ``make run`` imports
(fashion's NDJSON as shipped, gzipped: 46 MB unzipped is over ``AISLE_MAX_BULK_BYTES``; Home Depot's
CSV rows as NDJSON), mapped by the tenant's attribute configuration on the server. Typesense:
``documents/import?action=upsert`` with the same products as the documents its collection holds (JSON
lines, uncompressed: Typesense takes no gzip). Both into the live tenant or collection, so every product
is replaced by itself. Throughput = products / (the answer - the request's start): Typesense answers once
its documents are indexed, Aisle once the import is durable in its change log, so the time until a
product of the file is searchable is measured apart: one product's title carries a fresh word, searched
for after the answer as :mod:`bench.update_lag` does (``searchable after``; ``None`` past the timeout).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bench.catalog_endpoints import Endpoint
from bench.update_lag import found_by_word


@dataclass
class ImportRun:
    """Products sent, seconds to the answer, rows not applied, seconds from the answer to searchable."""

    products: int
    seconds: float
    refused: int
    searchable_s: float | None

    @property
    def rate(self) -> float:
        return self.products / self.seconds if self.seconds else 0.0


def import_catalog(
    endpoint: Endpoint,
    tenant: str,
    body: bytes,
    content_type: str,
    products: int,
    marker: tuple[str, str],
    *,
    timeout_s: float,
) -> ImportRun:
    """Import ``body`` (``products`` products) and time it; ``marker``: (product id, its fresh word)."""
    path, data, ctype = endpoint.import_request(tenant, body, content_type)
    start = time.perf_counter()
    answer = endpoint.http.client.post(path, content=data, headers={"Content-Type": ctype}, timeout=900)
    acked = time.perf_counter()
    refused = endpoint.import_refused(answer)
    pid, word = marker
    wait, searchable = 0.002, None
    while time.perf_counter() - acked < timeout_s:
        if found_by_word(endpoint, tenant, word, pid):
            searchable = time.perf_counter() - acked
            break
        time.sleep(wait)
        wait = min(wait * 1.5, 0.1)
    return ImportRun(products, acked - start, refused, searchable)
