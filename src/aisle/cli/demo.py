"""``aisle demo``: build the demo tenants (see :mod:`aisle.demo`); ``aisle demo scale``: a synthetic
catalog of any size (:mod:`aisle.cli.demo_scale`); ``aisle status``: the builds' progress."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from aisle.cli.common import fail, names
from aisle.core.errors import AisleError

demo_app = typer.Typer()


def demo(
    ctx: typer.Context,
    data_dir: Path = typer.Option(Path("../shared/data"), help="The shared data folder."),
    if_missing: bool = typer.Option(False, "--if-missing", help="Keep tenants that already exist."),
    only: list[str] = typer.Option(
        [], "--only", help="Create only these demo tenants' catalogs (comma-separated or repeated)."
    ),
    recs: bool = typer.Option(True, help="Train and deploy the demo recommendation models."),
    vectors: bool = typer.Option(True, help="Build the embeddings for vector search."),
    images: bool = typer.Option(True, help="Also embed the fashion photos (needs the 'image' extra)."),
    ranker: bool = typer.Option(True, help="Train the Home Depot search ranker on its dev judgments."),
    cheap: bool = typer.Option(
        False, "--cheap", help="Only the steps that take seconds; leave the heavy ones to --heavy."
    ),
    heavy: bool = typer.Option(
        False,
        "--heavy",
        help="Only the heavy artifacts (embeddings, SIMILAR_ITEMS, ranker), reporting to `aisle status`; "
        "what `aisle serve --build-demo` runs in the background.",
    ),
) -> None:
    """Create the demo tenants with catalogs, indexes, query log, models, containers, embeddings and
    the search ranker (``aisle demo scale``: a synthetic catalog of N products instead)."""
    if ctx.invoked_subcommand is not None:
        return
    from aisle.catalog.datasets import demo_datasets
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings

    wanted = names(only, [ds.tenant for ds in demo_datasets()], "--only")
    settings = load_settings()
    data = data_dir.resolve() if data_dir.exists() else None
    if data is None:
        typer.secho(
            f"shared data not found at {data_dir}: only the 'default' tenant can be created", fg="yellow"
        )
    start = time.perf_counter()
    if heavy:
        from aisle.demo.builder import build_heavy, run_in_background

        run_in_background()
        failed = build_heavy(settings, data, images=images, echo=typer.echo)
        typer.echo(f"background builds ended in {time.perf_counter() - start:.0f}s, {max(failed, 0)} failed")
        raise typer.Exit(1 if failed > 0 else 0)
    from aisle.demo import build_demo

    store = open_blob_store_from_settings(settings)
    try:
        build_demo(
            settings,
            store,
            data,
            only=wanted,
            if_missing=if_missing,
            recs=recs,
            vectors=vectors,
            images=images,
            ranker=ranker,
            cheap=cheap,
        )
    except AisleError as exc:
        fail(exc)
    typer.echo(f"demo ready in {time.perf_counter() - start:.0f}s")


def status(
    as_json: bool = typer.Option(False, "--json", help="One JSON document (the shape of GET /health)."),
) -> None:
    """The background builds (embeddings, models, rankers): state, percentage and ETA of each."""
    import orjson

    from aisle.core.builds_resolver import open_build_board
    from aisle.core.config import load_settings

    board = open_build_board(load_settings())
    builds = board.all()
    if as_json:
        doc = {tenant: [b.to_dict() for b in found] for tenant, found in board.by_tenant().items()}
        typer.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    if not builds:
        typer.echo("no background builds recorded (they start with `aisle serve --build-demo`)")
        return
    typer.echo(f"{'tenant':<11} {'artifact':<14} {'state':<12} {'done':>5} {'eta':>7}  message")
    for b in builds:
        eta = b.eta_s
        eta_text = "" if eta is None else f"{eta:.0f}s"
        typer.echo(
            f"{b.tenant:<11} {b.artifact:<14} {b.state:<12} {b.percent:>4}% {eta_text:>7}  {b.message}"
        )


def register(app: typer.Typer) -> None:
    from aisle.cli.demo_scale import scale

    demo_app.callback(invoke_without_command=True)(demo)
    demo_app.command("scale")(scale)
    app.add_typer(demo_app, name="demo")
    app.command("status")(status)
