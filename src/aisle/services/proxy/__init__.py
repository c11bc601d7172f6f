"""The catalog-search proxy service (port 8082): the tenant's external retail search service."""
