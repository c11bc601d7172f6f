"""The recommendation commands: ``aisle train TYPE --tenant T`` and ``aisle eval recs``.

What a model type learns from, how it trains and whether Spark can train it are read from its row of
the model-type table (:mod:`aisle.recs.model_types`); this module only parses options and prints.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from aisle.cli.common import fail, names
from aisle.recs.models.base import ModelType

if TYPE_CHECKING:
    from aisle.core.config import Settings
    from aisle.recs.model_types import ModelTypeRow
    from aisle.recs.training.sources import SourceOptions


class Engine(str, Enum):
    """Where ``aisle train`` computes a model's statistics."""

    embedded = "embedded"  # numpy / scipy / polars in this process
    spark = "spark"  # Apache Spark, from Parquet in object storage


DATA_DIR = typer.Option(Path("../shared/data"), "--data-dir", help="Folder of the shared data sets.")


def register(app: typer.Typer, eval_app: typer.Typer) -> None:
    """Add ``train`` to ``app`` and ``recs`` to the ``eval`` group."""
    app.command("train")(train)
    eval_app.command("recs")(eval_recs)


def train(
    model_type: ModelType = typer.Argument(..., help="Model type to train."),
    tenant: str = typer.Option(..., "--tenant", help="Tenant whose registry receives the model."),
    data_dir: Path = DATA_DIR,
    model_id: str | None = typer.Option(None, "--model-id", help="Default: the type in kebab case."),
    source: str | None = typer.Option(
        None, "--source", help="Events for CUSTOMERS_ALSO_VIEW: yoochoose (default) or rees46."
    ),
    max_week: int = typer.Option(
        49, "--max-week", min=2, help="Complete Journey: train on weeks before this one (>= 2)."
    ),
    threads: int = typer.Option(2, "--threads", help="onnxruntime threads for SIMILAR_ITEMS."),
    engine: Engine = typer.Option(Engine.embedded, "--engine", help="embedded (default) or spark."),
    master: str | None = typer.Option(
        None, "--master", help="Spark master URL (default: $SPARK_MASTER, else local[*])."
    ),
    input_uri: str | None = typer.Option(
        None,
        "--input",
        help="Spark: Parquet to train from (path or URI Spark reads); default: a snapshot of the "
        "data set exported to the tenant's datasets/ in object storage.",
    ),
) -> None:
    """Train a model for a tenant: write its artifact, then its registry entry.

    CUSTOMERS_ALSO_VIEW reads YooChoose (or REES46) views, and publishes the tenant's popularity and
    trending artifact from the same events (:mod:`aisle.recs.popularity_store`);
    FREQUENTLY_BOUGHT_TOGETHER and BUNDLE_RECOMMENDATIONS read Complete Journey baskets; SIMILAR_ITEMS
    and GOOD_BETTER_BEST read the tenant's catalog in storage. With ``--engine spark`` (not
    SIMILAR_ITEMS) the events and baskets are first exported as Parquet under the tenant's
    ``datasets/`` in object storage (unless ``--input`` names Parquet already there) and Spark trains
    from it.
    """
    from aisle.core.config import load_settings
    from aisle.core.errors import AisleError, TenantNotFound
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.recs.model_types import DataSource, row_of
    from aisle.recs.training import save_model
    from aisle.recs.training.sources import SourceOptions

    settings = load_settings()
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    options = SourceOptions(
        tenants, tenant, data_dir, settings.data_dir, source, max_week, threads, progress=typer.echo
    )
    row = row_of(model_type)
    try:
        if not tenants.exists(tenant):
            raise TenantNotFound(tenant)
        if engine is Engine.spark:
            model, info = _train_on_spark(row, options, settings, master, input_uri)
        else:
            model, info = _train_embedded(row, options)
        record = save_model(options.scope, tenant, model, model_id=model_id, info=info)
        if row.data is DataSource.VIEWS:  # the same events give the tenant's popularity artifact
            from aisle.recs import popularity_store
            from aisle.recs.training.sources import view_events

            pop = popularity_store.refresh(options.scope, view_events(options), info=info)
            typer.echo(f"{tenant} popularity v{pop.version}: {pop.items} products from {pop.events} events")
    except AisleError as exc:
        fail(exc)
    except (FileNotFoundError, ValueError) as exc:  # missing data; data a model cannot train on
        fail(str(exc))
    typer.echo(f"{tenant}/{record.model_id} v{record.version} registered at {record.artifact_uri}")


def _train_embedded(row: ModelTypeRow, options: SourceOptions) -> tuple[Any, dict[str, Any]]:
    """Read the row's data source and run its embedded trainer; returns the model and its ``info``."""
    from aisle.recs.training import sources

    data, info = sources.read(row, options)
    return row.trainer()(data), info


def _train_on_spark(
    row: ModelTypeRow, options: SourceOptions, settings: Settings, master: str | None, input_uri: str | None
) -> tuple[Any, dict[str, Any]]:
    """Export the row's data set as Parquet to object storage (unless ``input_uri``), train on it with
    Spark; returns the model and its record's ``info``."""
    import importlib.util

    from aisle.recs import snapshots
    from aisle.recs.training import sources

    if importlib.util.find_spec("pyspark") is None:
        fail("--engine spark needs the spark extra (pip install -e '.[spark]') and Java 17+")
    from aisle.recs.spark.session import training_session
    from aisle.recs.spark.training import train_spark

    if row.spark is None:
        fail(f"{row.model_type.value} is not trained on Spark: use --engine embedded")
    path, categories, info = sources.export(row, options, input_uri)
    uri = input_uri or snapshots.spark_uri(options.scope, settings.storage_url, options.tenant, str(path))
    typer.echo(f"training {row.model_type.value} on Spark from {uri}")
    with training_session(master) as spark:
        model = train_spark(spark, row.model_type, uri, categories)
    return model, info | {"engine": "spark", "input": uri}


EVALUATIONS = ("yoochoose", "completejourney", "similar")
"""The offline evaluations ``aisle eval recs --only`` can name."""


def eval_recs(
    data_dir: Path = DATA_DIR,
    only: list[str] = typer.Option(
        [], "--only", help="yoochoose, completejourney and/or similar (default: all three)."
    ),
    embeddings: Path | None = typer.Option(
        None,
        "--embeddings",
        help="similar: a .npy of fashion embeddings (row order of the file) to skip encoding.",
    ),
) -> None:
    """Offline recommendation quality and cost on the shared data (protocols of data/README.md)."""
    import numpy as np

    from aisle.recs.evaluation import offline

    wanted = set(names(only, EVALUATIONS, "--only")) or set(EVALUATIONS)
    if "yoochoose" in wanted:
        _print(
            "CUSTOMERS_ALSO_VIEW, YooChoose 100k (bars: HR@20 >= 0.69, MRR@20 >= 0.37)",
            offline.eval_yoochoose(data_dir),
        )
    if "completejourney" in wanted:
        _print(
            "FREQUENTLY_BOUGHT_TOGETHER, Complete Journey (bars: HR@10 >= 0.60, recall@10 >= 0.125; "
            "all CJ models <= 90 s, 4 GB)",
            offline.eval_completejourney(progress=typer.echo),
        )
    if "similar" in wanted:
        products = offline.read_fashion(data_dir)
        vectors = np.load(embeddings) if embeddings else None
        _print(
            "SIMILAR_ITEMS, fashion (bars: same article type >= 0.92, same gender >= 0.97)",
            offline.eval_similar(products, vectors, progress=typer.echo),
        )


def _print(title: str, figures: dict) -> None:
    typer.echo(title)
    for k, v in figures.items():
        typer.echo(f"  {k:<28} {v:.4f}" if isinstance(v, float) else f"  {k:<28} {v}")
