"""Embeddings of the demo tenants, for ``aisle demo`` (fashion text and photos, Home Depot text)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aisle.core.config import Settings
from aisle.core.errors import AisleError
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.vectors.text_encoder import EncoderUnavailable

Echo = Callable[[str], None]
Progress = Callable[[str, int, int], None]
TEXT_TENANTS = ("fashion", "homedepot")
IMAGE_TENANTS = {"fashion": Path("fashion") / "images"}


def build_demo_vectors(
    settings: Settings,
    shared_data: Path | None,
    *,
    images: bool = True,
    echo: Echo = print,
    progress_for: Callable[[str], Progress] | None = None,
) -> dict[str, Path]:
    """Build (or find) the demo tenants' vector tables; returns ``{"<tenant>/<kind>": table dir}``.

    Idempotent: a table already built for the tenant's current catalog version costs one directory
    check (milliseconds). The first build embeds about 44k fashion and 55k Home Depot product texts
    with MiniLM (a few minutes on 2 free cores, longer on a busy machine) and the 9,583 fashion photos
    with EfficientNet-Lite0 (several minutes; exports the ONNX model once, needs the ``image`` extra).
    Tenants that do not exist, or whose data is absent, are skipped with a message; a missing image
    extra skips the photos with a message. Nothing raises for a missing optional part.

    ``progress_for(tenant)`` gives the progress callback of one tenant's build (``(stage, done, total)``,
    e.g. :class:`aisle.core.progress.ProgressLine`); without it the builds report only when done.
    """
    from aisle.vectors.build import build_text_vectors
    from aisle.vectors.image_build import build_image_vectors

    tenants = Tenants(open_blob_store_from_settings(settings), ttl=0)
    built: dict[str, Path] = {}
    for tenant in TEXT_TENANTS:
        if not tenants.exists(tenant):
            echo(f"{tenant}: no such tenant, text vectors skipped")
            continue
        try:
            built[f"{tenant}/text"] = build_text_vectors(
                tenants, tenant, settings.data_dir, progress=progress_for(tenant) if progress_for else None
            )
            echo(f"{tenant}: text vectors ready")
        except (AisleError, EncoderUnavailable) as exc:
            echo(f"{tenant}: text vectors skipped: {exc}")
    if not images:
        return built
    for tenant, rel in IMAGE_TENANTS.items():
        folder = shared_data / rel if shared_data is not None else None
        if folder is None or not folder.is_dir() or not tenants.exists(tenant):
            echo(f"{tenant}: photos or tenant not available, image vectors skipped")
            continue
        try:
            built[f"{tenant}/image"] = build_image_vectors(
                tenants,
                tenant,
                settings.data_dir,
                folder,
                progress=progress_for(f"{tenant} photos") if progress_for else None,
            )
            echo(f"{tenant}: image vectors ready")
        except AisleError as exc:
            echo(f"{tenant}: image vectors skipped: {exc.message}")
    return built
