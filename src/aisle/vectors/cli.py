"""``aisle vectors build | build-images | info``: product embeddings per tenant."""

from __future__ import annotations

from pathlib import Path

import typer

from aisle.core.errors import AisleError

vectors_app = typer.Typer(
    help="Product embeddings for vector, image and hybrid search.", no_args_is_help=True
)


def _fail(exc: AisleError) -> None:
    typer.secho(f"error [{exc.code}]: {exc.message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def _context():  # type: ignore[no-untyped-def]
    from aisle.catalog.cli import ProgressLine
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants

    settings = load_settings()
    return settings, Tenants(open_blob_store_from_settings(settings), ttl=0), ProgressLine


@vectors_app.command("build")
def build(tenant: str = typer.Argument(..., help="Tenant whose current catalog to embed.")) -> None:
    """Embed the tenant's product texts (MiniLM) for its current catalog version, if not done yet."""
    from aisle.vectors.build import build_text_vectors

    settings, tenants, progress_line = _context()
    try:
        path = build_text_vectors(tenants, tenant, settings.data_dir, progress=progress_line(tenant))
    except AisleError as exc:
        _fail(exc)
    typer.echo(f"{tenant}: text vectors at {path}")


@vectors_app.command("build-images")
def build_images(
    tenant: str = typer.Argument(..., help="Tenant whose product photos to embed."),
    images: Path = typer.Option(..., "--images", help="Folder of <product id>.jpg / .png photos."),
    limit: int = typer.Option(0, help="Embed only the first N photos (0: all)."),
) -> None:
    """Embed the tenant's product photos (EfficientNet-Lite0 + label probe), if not done yet."""
    from aisle.vectors.image_build import build_image_vectors

    settings, tenants, progress_line = _context()
    if not images.is_dir():
        typer.secho(f"error: {images} is not a folder", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    try:
        path = build_image_vectors(
            tenants, tenant, settings.data_dir, images, progress=progress_line(tenant), limit=limit or None
        )
    except AisleError as exc:
        _fail(exc)
    typer.echo(f"{tenant}: image vectors at {path}")


@vectors_app.command("demo")
def demo(
    data_dir: Path = typer.Option(Path("../shared/data"), help="The shared data folder."),
    images: bool = typer.Option(True, help="Also embed the fashion photos."),
) -> None:
    """Build the demo tenants' vectors (fashion, homedepot); fast when already built."""
    from aisle.core.config import load_settings
    from aisle.vectors.demo import build_demo_vectors

    build_demo_vectors(
        load_settings(), data_dir.resolve() if data_dir.exists() else None, images=images, echo=typer.echo
    )


@vectors_app.command("info")
def info(tenant: str = typer.Argument(...)) -> None:
    """The tenant's vector tables: kind, catalog version, count, dimension."""
    from aisle.vectors.store import VectorIndexMissing, VectorStore

    settings, _, _ = _context()
    store = VectorStore(settings.data_dir)
    for kind in ("text", "image"):
        try:
            table = store.table(tenant, kind)
        except VectorIndexMissing:
            typer.echo(f"{kind}: not built")
            continue
        typer.echo(f"{kind}: {len(table)} vectors of {table.dimension} for catalog {table.version}")


def register(app: typer.Typer) -> None:
    app.add_typer(vectors_app, name="vectors")
