"""Choose a BlobStore backend from a URI: the one place that knows every backend."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.storage.blob import BlobStore
from aisle.core.storage.blob_obstore import ObstoreBlobStore


def open_blob_store(
    url: str,
    *,
    s3_endpoint: str | None = None,
    s3_region: str = "us-east-1",
    s3_access_key_id: str | None = None,
    s3_secret_access_key: str | None = None,
) -> BlobStore:
    """Open the object store named by ``url``.

    Supported: ``file://DIR`` (relative or absolute; created if missing), a bare path, and
    ``s3://BUCKET[/PREFIX]`` (AWS or any S3-compatible server given by ``s3_endpoint``;
    credentials from the arguments or the usual ``AWS_*`` variables).

    Raises:
        BadRequest: an unsupported scheme.
    """
    from obstore.store import LocalStore, S3Store

    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        raw = url[len("file://") :] if url.startswith("file://") else url
        root = Path(raw).expanduser().resolve()
        root.mkdir(parents=True, exist_ok=True)
        return ObstoreBlobStore(LocalStore(root), root=root)
    if parsed.scheme == "s3":
        config: dict[str, object] = {"region": s3_region}
        if s3_endpoint:
            config["endpoint"] = s3_endpoint
            config["allow_http"] = s3_endpoint.startswith("http://")
            config["virtual_hosted_style_request"] = False
        if s3_access_key_id:
            config["access_key_id"] = s3_access_key_id
        if s3_secret_access_key:
            config["secret_access_key"] = s3_secret_access_key
        store = S3Store(parsed.netloc, prefix=parsed.path.strip("/") or None, **config)  # type: ignore[arg-type]
        return ObstoreBlobStore(store)
    raise BadRequest(
        f"unsupported storage URL scheme '{parsed.scheme}' in '{url}'", code=ErrorCode.STORAGE_URL_INVALID
    )


def open_blob_store_from_settings(settings: object) -> BlobStore:
    """Open the store configured by :class:`aisle.core.config.Settings`."""
    return open_blob_store(
        settings.storage_url,  # type: ignore[attr-defined]
        s3_endpoint=settings.s3_endpoint,  # type: ignore[attr-defined]
        s3_region=settings.s3_region,  # type: ignore[attr-defined]
        s3_access_key_id=settings.s3_access_key_id,  # type: ignore[attr-defined]
        s3_secret_access_key=settings.s3_secret_access_key,  # type: ignore[attr-defined]
    )
