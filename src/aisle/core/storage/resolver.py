"""Choose a BlobStore backend from a URI: the one place that knows every backend."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.storage.blob import BlobStore
from aisle.core.storage.blob_obstore import ObstoreBlobStore


def s3_timeouts(timeout_s: float) -> dict[str, Any]:
    """obstore options bounding one S3 operation to about ``timeout_s`` seconds, retries included.

    obstore's defaults retry a failed request 10 times for up to 3 minutes, each attempt allowed 30 s:
    a request that needs a dead server would hang for minutes. Here an attempt gets ``timeout_s`` (the
    download included, so the largest object must fit; its connection at most 2 s), and at most 2
    retries, 50-500 ms apart, start within ``timeout_s``; then the caller gets
    :class:`~aisle.core.errors.StorageUnavailable` (503). A refused connection fails in milliseconds.
    """
    seconds = f"{max(1, round(timeout_s * 1000))}ms"
    return {
        "client_options": {"timeout": seconds, "connect_timeout": f"{min(2000, round(timeout_s * 1000))}ms"},
        "retry_config": {
            "max_retries": 2,
            "retry_timeout": timedelta(seconds=timeout_s),
            "backoff": {
                "init_backoff": timedelta(milliseconds=50),
                "max_backoff": timedelta(milliseconds=500),
                "base": 2.0,
            },
        },
    }


def open_blob_store(
    url: str,
    *,
    s3_endpoint: str | None = None,
    s3_region: str = "us-east-1",
    s3_access_key_id: str | None = None,
    s3_secret_access_key: str | None = None,
    timeout_s: float = 10.0,
) -> BlobStore:
    """Open the object store named by ``url``.

    Supported: ``file://DIR`` (relative or absolute; created if missing), a bare path, and
    ``s3://BUCKET[/PREFIX]`` (AWS or any S3-compatible server given by ``s3_endpoint``;
    credentials from the arguments or the usual ``AWS_*`` variables). An S3 operation is bounded by
    ``timeout_s`` seconds (:func:`s3_timeouts`); a failed one raises ``StorageUnavailable`` (503).

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
        store = S3Store(
            parsed.netloc,
            prefix=parsed.path.strip("/") or None,
            **config,  # type: ignore[arg-type]
            **s3_timeouts(timeout_s),
        )
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
        timeout_s=settings.storage_timeout_seconds,  # type: ignore[attr-defined]
    )
