"""The vector search service (port 8083): index, delete and search product embeddings per tenant."""
