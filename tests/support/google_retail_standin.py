"""A local stand-in of Google's REST endpoints for the external-search tests (Google is outside the system).

Real HTTP on 127.0.0.1 (``http.server`` in a thread), answering from a small catalog with the request and
response JSON that Google publishes (REST reference of ``google.cloud.retail.v2`` and ``vision.v1``):

* ``POST /v2/projects/*/locations/*/catalogs/*/servingConfigs/*:search``: SearchRequest (query,
  visitorId, pageSize, offset, pageToken, filter, orderBy, facetSpecs, queryExpansionSpec,
  spellCorrectionSpec) -> SearchResponse (results[{id, product{name}}], facets, totalSize,
  correctedQuery, attributionToken, redirectUri, nextPageToken, queryExpansionInfo);
* ``GET /v2/projects/*/locations/*/catalogs/*:completeQuery?query=&maxSuggestions=&visitorId=``
  -> completionResults[{suggestion}], attributionToken;
* ``POST /v1/images:annotate``: requests[{image{content}, features[{type PRODUCT_SEARCH, maxResults}],
  imageContext{productSearchParams{productSet, productCategories, filter}}}] ->
  responses[{productSearchResults{results[{product{name, displayName, productLabels}, score}]}}];
* ``POST /token``: the OAuth 2.0 JWT bearer grant (RFC 7523) a service-account key's ``token_uri`` names.

Errors come in Google's envelope ``{"error": {"code", "message", "status"}}``: a filter or orderBy it
cannot parse is 400 INVALID_ARGUMENT; :meth:`GoogleStandin.fail` injects 401, 429 or 503,
:meth:`GoogleStandin.slow` delays answers and :meth:`GoogleStandin.hold` holds one until released.
Products are Retail ``Product`` JSON (``id``, ``title``, ``brands``, ``categories``,
``colorInfo.colorFamilies``, ``priceInfo.price``, ``attributes``).
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.google_credentials import verify_assertion
from tests.support.google_retail_filter import FilterSyntaxError, field_values, parse_filter
from tests.support.google_retail_search import facets, order, page_token, search_products

STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}
STATUS |= {500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
HOLD_GUARD_S = 60.0
"""Longest a held answer waits for its release: a guard against a hung test, not a figure under test."""
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"  # the aud google-auth signs, whatever token_uri
_SEARCH = re.compile(
    r"^/v2/(projects/[^/]+/locations/[^/]+/catalogs/[^/]+)/(servingConfigs|placements)/[^/]+:search$"
)
_COMPLETE = re.compile(r"^/v2/(projects/[^/]+/locations/[^/]+/catalogs/[^/]+):completeQuery$")
_ANNOTATE = re.compile(r"^/v1/(projects/[^/]+/(locations/[^/]+/)?)?images:annotate$")


class GoogleError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class GoogleStandin:
    """Google Retail + Vision Product Search on ``self.url`` (``http://127.0.0.1:PORT``); a context manager.

    Args:
        products: Retail Product JSON; ids are Aisle's product ids.
        images: product id -> JPEG/PNG bytes of its reference image (Vision Product Search).
        corrections: misspelt word -> word (spell correction); redirects: query -> redirectUri.
        access_token: when set, every API call needs ``Authorization: Bearer <token>`` (else 401),
            which ``POST /token`` issues for a JWT assertion signed by one of ``trusted_keys``
            (service account email -> public key PEM).
        product_category: the Vision product category of every product (``apparel-v2``).
    """

    def __init__(
        self,
        products: list[dict[str, Any]],
        *,
        images: dict[str, bytes] | None = None,
        corrections: dict[str, str] | None = None,
        redirects: dict[str, str] | None = None,
        access_token: str | None = None,
        trusted_keys: dict[str, bytes] | None = None,
        product_category: str = "apparel-v2",
    ) -> None:
        self.products = products
        self.images = {pid: _signature(data) for pid, data in (images or {}).items()}
        self.corrections = corrections or {}
        self.redirects = redirects or {}
        self.access_token = access_token
        self.trusted_keys = trusted_keys or {}
        self.product_category = product_category
        self.requests: list[tuple[str, str, Any]] = []
        self._faults: deque[tuple[str, Any]] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> GoogleStandin:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail(self, status: int, times: int = 1) -> None:
        """The next ``times`` API calls answer ``status`` in Google's error envelope."""
        with self._lock:
            self._faults.extend([("status", status)] * times)

    def slow(self, seconds: float, times: int = 1) -> None:
        """The next ``times`` API calls wait ``seconds`` before answering."""
        with self._lock:
            self._faults.extend([("slow", seconds)] * times)

    def hold(self) -> threading.Event:
        """The next API call answers only once the returned event is set (or after
        :data:`HOLD_GUARD_S`, so a test that forgets it does not hang): a client that gives up on its
        own budget returns while the answer is still held."""
        released = threading.Event()
        with self._lock:
            self._faults.append(("hold", released))
        return released

    def _next_fault(self) -> tuple[str, Any] | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    # -- the endpoints ------------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any, auth: str) -> Any:
        if method == "POST" and path == "/token":
            return self._token(query)
        self.requests.append((method, path, body if method == "POST" else query))
        fault = self._next_fault()
        if fault and fault[0] == "slow":
            time.sleep(fault[1])
        elif fault and fault[0] == "hold":
            fault[1].wait(HOLD_GUARD_S)
        elif fault:
            raise GoogleError(int(fault[1]), f"injected {int(fault[1])}")
        if self.access_token and auth != f"Bearer {self.access_token}":
            raise GoogleError(401, "Request had invalid authentication credentials.")
        if method == "POST" and (m := _SEARCH.match(path)):
            return self._search(m.group(1), body)
        if method == "GET" and _COMPLETE.match(path):
            return self._complete(query)
        if method == "POST" and _ANNOTATE.match(path):
            return {"responses": [self._annotate(r) for r in body.get("requests", [])]}
        raise GoogleError(404, f"no method {method} {path}")

    def _token(self, form: dict[str, list[str]]) -> dict[str, Any]:
        """RFC 7523 section 2.1: a JWT signed (RS256) by a trusted service account key, for Google."""
        if form.get("grant_type") != [JWT_BEARER] or not form.get("assertion"):
            raise GoogleError(400, "invalid_request")
        if not verify_assertion(form["assertion"][0], self.trusted_keys, GOOGLE_TOKEN_AUDIENCE):
            raise GoogleError(400, "invalid_grant")
        return {"access_token": self.access_token or "anonymous", "expires_in": 3600, "token_type": "Bearer"}

    def _search(self, catalog: str, req: dict[str, Any]) -> dict[str, Any]:
        token = str(uuid.uuid4())
        query = str(req.get("query", ""))
        if query.strip().lower() in self.redirects:
            return {"redirectUri": self.redirects[query.strip().lower()], "attributionToken": token}
        try:
            matches = [p for p in self.products if parse_filter(str(req.get("filter", "")))(p)]
            ordered_keys = order(str(req.get("orderBy", "")))
        except FilterSyntaxError as exc:
            raise GoogleError(400, str(exc)) from None
        mode = req.get("spellCorrectionSpec", {}).get("mode", 0)
        words = re.findall(r"\w+", query.lower())
        corrected = " ".join(self.corrections.get(w, w) for w in words)
        searched = corrected if corrected != " ".join(words) and mode in (0, 2, "AUTO") else query
        expand = req.get("queryExpansionSpec", {}).get("condition", 0) in (3, "AUTO")
        hits, expanded = search_products(matches, searched, ordered_keys, expand=expand)
        offset = int(req.get("offset", 0) or 0)
        if req.get("pageToken"):
            offset = int(base64.b64decode(req["pageToken"]).decode())
        size = min(int(req.get("pageSize", 0) or 20), 120)
        out: dict[str, Any] = {
            "results": [
                {"id": p["id"], "product": {"name": f"{catalog}/branches/0/products/{p['id']}"}}
                for p in hits[offset : offset + size]
            ],
            "totalSize": len(hits),
            "attributionToken": token,
            "facets": facets(hits, req.get("facetSpecs", [])),
        }
        if offset + size < len(hits):
            out["nextPageToken"] = page_token(offset + size)
        if corrected != " ".join(words):
            out["correctedQuery"] = corrected
        if expanded:
            out["queryExpansionInfo"] = {"expandedQuery": True}
        return out

    def _complete(self, query: dict[str, list[str]]) -> dict[str, Any]:
        prefix = (query.get("query") or [""])[0].lower()
        limit = int((query.get("maxSuggestions") or ["20"])[0])
        seen: list[str] = []
        for p in self.products:
            for text in [p.get("title", ""), *p.get("brands", [])]:
                words = text.lower().split()
                for i in range(len(words)):
                    phrase = " ".join(words[i : i + 2])
                    if phrase.startswith(prefix) and phrase not in seen:
                        seen.append(phrase)
        seen.sort(key=lambda s: (len(s), s))
        return {
            "completionResults": [{"suggestion": s} for s in seen[:limit]],
            "attributionToken": str(uuid.uuid4()),
        }

    def _annotate(self, req: dict[str, Any]) -> dict[str, Any]:
        features = req.get("features", [])
        if not any(f.get("type") in (12, "PRODUCT_SEARCH") for f in features):
            return {}
        params = req.get("imageContext", {}).get("productSearchParams", {})
        if not params.get("productSet"):
            return {"error": {"code": 3, "message": "productSearchParams.productSet is required"}}
        if self.product_category not in params.get("productCategories", []):
            return {"productSearchResults": {"results": []}}
        try:
            query_sig = _signature(base64.b64decode(req.get("image", {}).get("content", "")))
        except (ValueError, OSError):
            return {"error": {"code": 3, "message": "Bad image data."}}
        labels = _label_filter(params.get("filter", ""))
        limit = max(int(f.get("maxResults", 10) or 10) for f in features)
        scored = []
        for p in self.products:
            sig = self.images.get(p["id"])
            if sig is None or not labels(_labels(p)):
                continue
            score = 1.0 - sum(abs(a - b) for a, b in zip(query_sig, sig, strict=True)) / (255.0 * len(sig))
            scored.append((round(score, 6), p))
        scored.sort(key=lambda t: -t[0])
        location = params["productSet"].rsplit("/productSets/", 1)[0]
        return {
            "productSearchResults": {
                "indexTime": "2026-01-01T00:00:00Z",
                "results": [
                    {
                        "product": {
                            "name": f"{location}/products/{p['id']}",
                            "displayName": p.get("title", ""),
                            "productCategory": self.product_category,
                            "productLabels": [{"key": k, "value": v} for k, v in _labels(p)],
                        },
                        "score": score,
                    }
                    for score, p in scored[:limit]
                ],
            }
        }


def _labels(product: dict[str, Any]) -> list[tuple[str, str]]:
    pairs = [("brand", b) for b in product.get("brands", [])]
    return pairs + [("color", c) for c in field_values(product, "colorFamilies")]


def _label_filter(text: str) -> Any:
    """Vision Product Search filter: ``key = value`` terms, OR inside parentheses, ANDed."""
    groups = []
    for part in re.split(r"\s+AND\s+", text.strip()) if text.strip() else []:
        alternatives = re.split(r"\s+OR\s+", part.strip().strip("()"))
        groups.append({tuple(s.strip() for s in a.split("=", 1)) for a in alternatives})
    return lambda labels: all(any(pair in group for pair in labels) for group in groups)


def _signature(data: bytes) -> list[int]:
    """8x8 grey thumbnail: the stand-in's idea of what a photo looks like."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return list(img.convert("L").resize((8, 8)).tobytes())


def _handler(standin: GoogleStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            query = parse_qs(parts.query)
            try:
                if parts.path == "/token":
                    query = parse_qs(raw.decode())
                body = json.loads(raw) if raw and parts.path != "/token" else {}
                status, payload = (
                    200,
                    standin.handle(
                        self.command, parts.path, query, body, self.headers.get("Authorization", "")
                    ),
                )
            except GoogleError as exc:
                status = exc.status
                payload = {
                    "error": {"code": status, "message": exc.message, "status": STATUS.get(status, "UNKNOWN")}
                }
                if parts.path == "/token":  # RFC 6749 section 5.2
                    payload = {"error": exc.message, "error_description": "refused by the stand-in"}
            except json.JSONDecodeError as exc:
                status, payload = (
                    400,
                    {"error": {"code": 400, "message": str(exc), "status": "INVALID_ARGUMENT"}},
                )
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def backend_config(standin: GoogleStandin, *, vision: bool = True, **extra: Any) -> dict[str, Any]:
    """The ``backend`` of a ``crs_config.json`` pointing at ``standin`` (``type: google_retail``)."""
    host = standin.url.removeprefix("http://")
    config: dict[str, Any] = {
        "type": "google_retail",
        "project": "aisle-test",
        "endpoint": host,
        "url_scheme": "http",
        **extra,
    }
    if vision:
        config["vision"] = {
            "product_set": "projects/aisle-test/locations/us-west1/productSets/catalog",
            "product_categories": ["apparel-v2"],
            "endpoint": host,
        }
    return config
