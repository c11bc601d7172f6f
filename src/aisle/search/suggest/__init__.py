"""Autocomplete (spec ``GET /suggestions``): per-tenant suggestion indexes over the query log, brands,
categories and product names, with typo-tolerant word-prefix matching. No FastAPI here.

- :mod:`.querylog`: the tenant's query log in object storage (``aisle suggest import-log``).
- :mod:`.candidates`: suggestion candidates from the catalog and the log, deduplicated, each checked to
  return search results.
- :mod:`.prefix_index`: the in-memory word-prefix index (sorted vocabulary, flat postings, typo pools).
- :mod:`.suggester`: ranking by popularity, per-type boosts and limits; :mod:`.registry`: one cached
  suggester per tenant, rebuilt when the catalog, the log or the configuration changes.
"""
