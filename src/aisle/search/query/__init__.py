"""What a search asks and the query helpers beneath the pipeline's stages.

:class:`SearchQuery` is the one request value; the helper modules (text normalisation, filter clauses,
term queries, facet range labels) are shared by the stages, the merchandising rules, autocomplete,
the external adapters and learned ranking, and import nothing above them.
"""

from aisle.search.query.search_query import SearchQuery

__all__ = ["SearchQuery"]
