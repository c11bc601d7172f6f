"""``aisle vectors build | build-images | info``: product embeddings per tenant."""

from __future__ import annotations

from pathlib import Path

import typer

from aisle.cli.common import fail, settings_and_tenants
from aisle.core.errors import AisleError
from aisle.core.progress import ProgressLine

vectors_app = typer.Typer(
    help="Product embeddings for vector, image and hybrid search.", no_args_is_help=True
)


@vectors_app.command("build")
def build(tenant: str = typer.Argument(..., help="Tenant whose current catalog to embed.")) -> None:
    """Embed the tenant's product texts (MiniLM) for its current catalog version, if not done yet."""
    from aisle.vectors.build import build_text_vectors

    settings, tenants = settings_and_tenants()
    try:
        path = build_text_vectors(tenants, tenant, settings.data_dir, progress=ProgressLine(tenant))
    except AisleError as exc:
        fail(exc)
    typer.echo(f"{tenant}: text vectors at {path}")


@vectors_app.command("build-images")
def build_images(
    tenant: str = typer.Argument(..., help="Tenant whose product photos to embed."),
    images: Path = typer.Option(..., "--images", help="Folder of <product id>.jpg / .png photos."),
    limit: int = typer.Option(0, help="Embed only the first N photos (0: all)."),
) -> None:
    """Embed the tenant's product photos (EfficientNet-Lite0 + label probe), if not done yet."""
    from aisle.vectors.image_build import build_image_vectors

    settings, tenants = settings_and_tenants()
    if not images.is_dir():
        fail(f"{images} is not a folder")
    try:
        path = build_image_vectors(
            tenants, tenant, settings.data_dir, images, progress=ProgressLine(tenant), limit=limit or None
        )
    except AisleError as exc:
        fail(exc)
    typer.echo(f"{tenant}: image vectors at {path}")


@vectors_app.command("demo")
def demo(
    data_dir: Path = typer.Option(Path("../shared/data"), help="The shared data folder."),
    images: bool = typer.Option(True, help="Also embed the fashion photos."),
) -> None:
    """Build the demo tenants' vectors (fashion, homedepot); fast when already built."""
    from aisle.core.config import load_settings
    from aisle.demo.vectors import build_demo_vectors

    build_demo_vectors(
        load_settings(),
        data_dir.resolve() if data_dir.exists() else None,
        images=images,
        echo=typer.echo,
        progress_for=ProgressLine,
    )


@vectors_app.command("info")
def info(tenant: str = typer.Argument(...)) -> None:
    """The tenant's vector tables: kind, catalog version, count, dimension."""
    from aisle.vectors.store import VectorIndexMissing, VectorStore

    settings, tenants = settings_and_tenants()
    store = VectorStore.from_settings(settings, tenants.store)
    for kind in ("text", "image"):
        try:
            table = store.table(tenant, kind)
        except VectorIndexMissing:
            typer.echo(f"{kind}: not built")
            continue
        typer.echo(f"{kind}: {len(table)} vectors of {table.dimension} for catalog {table.version}")


def register(app: typer.Typer) -> None:
    app.add_typer(vectors_app, name="vectors")
