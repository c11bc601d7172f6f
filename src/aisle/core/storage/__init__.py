"""Object storage behind the :class:`BlobStore` protocol, chosen by URI in :func:`open_blob_store`."""

from aisle.core.storage.blob import BlobNotFound, BlobStore, PrefixBlobStore
from aisle.core.storage.resolver import open_blob_store

__all__ = ["BlobNotFound", "BlobStore", "PrefixBlobStore", "open_blob_store"]
