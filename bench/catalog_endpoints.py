"""The two catalogs ``bench_catalog_updates`` writes to and reads back, over HTTP only.

Aisle: the search service's product API (``PATCH /products/{id}`` as ``application/merge-patch+json``,
``POST /products/batch``, ``GET /products/{id}``, ``POST /catalog/import``) and ``POST /search``.
Typesense 0.24.1: its documents API (``PATCH /collections/{c}/documents/{id}``,
``documents/import?action=update|upsert`` as JSON lines, ``GET documents/{id}``) and ``documents/search``.

Each endpoint says how to ask a question (a path and, for a POST, a body) and how to read the answer, so
the same requests go through ``httpx`` one at a time (the lag probes) or through the lean load client
(:func:`bench.http_load.get_many`, the read-back of every acknowledged value).
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import orjson

TIMEOUT_S = 60.0


class WriteRefused(RuntimeError):
    """A write the engine did not acknowledge (a non-2xx answer, or an operation not applied)."""


class _Http:
    """One keep-alive ``httpx.Client`` per thread (the update clients, the probes and the main thread)."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url, self.headers = url, headers
        self._local = threading.local()

    @property
    def client(self) -> httpx.Client:
        client = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client(base_url=self.url, headers=self.headers, timeout=TIMEOUT_S)
            self._local.client = client
        return client


class AisleEndpoint:
    """Aisle's search service as ``aisle serve`` runs it: auth off (no token on the requests), or on
    (``headers`` carry a bearer token with the scopes the bench uses)."""

    name = "Aisle"

    def __init__(self, url: str, port: int, pid: int, headers: dict[str, str] | None = None) -> None:
        self.port, self.pid, self.headers = port, pid, dict(headers or {})
        self.http = _Http(url, self.headers)

    def patch(self, tenant: str, product_id: str, fields: dict[str, Any]) -> None:
        answer = self.http.client.patch(
            f"/products/{quote(product_id, safe='')}",
            params={"tenant": tenant},
            content=orjson.dumps(fields),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        if answer.status_code != 200 or answer.json()["status"] != "applied":
            raise WriteRefused(f"PATCH {product_id}: {answer.status_code} {answer.text[:200]}")

    def update_batch(self, tenant: str, updates: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
        """One ``POST /products/batch`` of merge patches; returns the ids whose patch did not apply, with
        why (``stale``, or ``failed`` and the error)."""
        body = {"operations": [{"op": "patch", "id": pid, "product": fields} for pid, fields in updates]}
        answer = self.http.client.post(
            "/products/batch",
            params={"tenant": tenant},
            content=orjson.dumps(body),
            headers={"Content-Type": "application/json"},
        )
        if answer.status_code != 200:
            raise WriteRefused(f"batch: {answer.status_code} {answer.text[:200]}")
        return {
            r["id"]: f"{r['status']} {r.get('error') or ''}"
            for r in answer.json()["results"]
            if r["status"] != "applied"
        }

    def import_request(self, tenant: str, body: bytes, content_type: str) -> tuple[str, bytes, str]:
        return f"/catalog/import?tenant={tenant}&reconciliation=incremental", body, content_type

    def import_refused(self, answer: httpx.Response) -> int:
        """Rows the import did not apply (bad rows or stale), from its report."""
        if answer.status_code != 200:
            raise WriteRefused(f"import: {answer.status_code} {answer.text[:300]}")
        report = answer.json()
        return int(report["badRowCount"]) + int(report["stale"])

    def search_request(self, tenant: str, words: str, size: int = 10) -> tuple[str, bytes | None]:
        body = {"tenant": tenant, "query": words, "size": size, "analytics": False}
        return "/search", orjson.dumps(body)

    def prices_request(self, tenant: str, prices: list[float]) -> tuple[str, bytes | None]:
        """A browse (empty query) filtered to products whose price is one of ``prices`` (at most 100)."""
        body = {
            "tenant": tenant,
            "query": "",
            "size": 100,
            "analytics": False,
            "filters": [{"field": "price", "value": prices}],
        }
        return "/search", orjson.dumps(body)

    @staticmethod
    def hits(body: bytes) -> list[dict[str, Any]]:
        return list(orjson.loads(body)["products"])

    def product_path(self, tenant: str, product_id: str) -> str:
        return f"/products/{quote(product_id, safe='')}?tenant={tenant}"

    @staticmethod
    def stored(body: bytes) -> dict[str, Any]:
        return dict(orjson.loads(body)["product"])

    def ask(self, request: tuple[str, bytes | None]) -> bytes:
        path, body = request
        answer = (
            self.http.client.get(path)
            if body is None
            else self.http.client.post(path, content=body, headers={"Content-Type": "application/json"})
        )
        answer.raise_for_status()
        return answer.content


class TypesenseEndpoint:
    """The bench's Typesense 0.24.1 server, one collection per tenant (named as the tenant)."""

    name = "Typesense 0.24.1"

    def __init__(self, url: str, port: int, pid: int, api_key: str, query_by: dict[str, str]) -> None:
        self.port, self.pid = port, pid
        self.headers = {"X-TYPESENSE-API-KEY": api_key}
        self.query_by = query_by  # tenant -> the query_by (and weights) parameters, as a query string
        self.http = _Http(url, self.headers)

    def patch(self, tenant: str, product_id: str, fields: dict[str, Any]) -> None:
        answer = self.http.client.patch(
            f"/collections/{tenant}/documents/{quote(product_id, safe='')}", content=orjson.dumps(fields)
        )
        if answer.status_code not in (200, 201):  # 0.24.1 answers a PATCH with 201
            raise WriteRefused(f"PATCH {product_id}: {answer.status_code} {answer.text[:200]}")

    def update_batch(self, tenant: str, updates: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
        """One ``documents/import?action=update``; returns the ids whose line did not succeed, with why."""
        lines = b"\n".join(orjson.dumps({"id": pid, **fields}) for pid, fields in updates)
        answer = self.http.client.post(
            f"/collections/{tenant}/documents/import", params={"action": "update"}, content=lines
        )
        if answer.status_code != 200:
            raise WriteRefused(f"import?action=update: {answer.status_code} {answer.text[:200]}")
        results = [orjson.loads(line) for line in answer.content.splitlines()]
        return {
            pid: r.get("error", "")
            for (pid, _), r in zip(updates, results, strict=True)
            if not r.get("success")
        }

    def import_request(self, tenant: str, body: bytes, content_type: str) -> tuple[str, bytes, str]:
        return f"/collections/{tenant}/documents/import?action=upsert", body, "text/plain"

    def import_refused(self, answer: httpx.Response) -> int:
        if answer.status_code != 200:
            raise WriteRefused(f"import: {answer.status_code} {answer.text[:300]}")
        return sum(not orjson.loads(line).get("success") for line in answer.content.splitlines())

    def search_request(self, tenant: str, words: str, size: int = 10) -> tuple[str, bytes | None]:
        params = urlencode({"q": words, "per_page": size})
        return f"/collections/{tenant}/documents/search?{params}&{self.query_by[tenant]}", None

    def prices_request(self, tenant: str, prices: list[float]) -> tuple[str, bytes | None]:
        values = ",".join(f"{p:.2f}" for p in prices)
        params = urlencode({"q": "*", "per_page": 100, "filter_by": f"price:=[{values}]"})
        return f"/collections/{tenant}/documents/search?{params}", None

    @staticmethod
    def hits(body: bytes) -> list[dict[str, Any]]:
        return [h["document"] for h in orjson.loads(body)["hits"]]

    def product_path(self, tenant: str, product_id: str) -> str:
        return f"/collections/{tenant}/documents/{quote(product_id, safe='')}"

    @staticmethod
    def stored(body: bytes) -> dict[str, Any]:
        return dict(orjson.loads(body))

    def ask(self, request: tuple[str, bytes | None]) -> bytes:
        path, _ = request
        answer = self.http.client.get(path)
        answer.raise_for_status()
        return answer.content


Endpoint = AisleEndpoint | TypesenseEndpoint
