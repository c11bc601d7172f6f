"""Bodies of the proxy service: the search service's own (``POST /search`` request, search response,
suggestion items), so a client can send the same request to either service."""

from __future__ import annotations

from aisle.search.model import SearchResult
from aisle.services.common.search_schemas import SearchRequest, SuggestionItem

__all__ = ["EXTERNAL_ERRORS", "SearchRequest", "SearchResult", "SuggestionItem"]

EXTERNAL_ERRORS = (409, 502, 503, 504)
"""Statuses every proxy route may answer for the external service (see ``docs/error-codes.md``):
409 not configured or unsupported, 502 unavailable or credentials refused (also while the circuit
breaker is open), 503 rate-limited or the tenant's configuration invalid, 504 too slow."""
