"""``aisle search`` (one query from the shell) and ``aisle eval search`` (NDCG@10 over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def search_cmd(
    tenant: str,
    query: str,
    size: int = typer.Option(10, min=0, max=100),
    facet: list[str] = typer.Option([], "--facet"),
) -> None:
    """Run one search in-process and print the JSON response."""
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants
    from aisle.search.indexes import IndexRegistry
    from aisle.search.pipeline import SearchPipeline
    from aisle.search.query import SearchQuery

    settings = load_settings()
    tenants = Tenants(open_blob_store_from_settings(settings))
    index = IndexRegistry(tenants, settings.data_dir).get(tenant)
    result = SearchPipeline().search(
        index, tenants.config(tenant), SearchQuery(query, size=size, facets=facet)
    )
    typer.echo(json.dumps(result.model_dump(by_alias=True), indent=2, default=str))


def eval_search(
    tenant: str = typer.Option(..., help="Tenant to query, e.g. homedepot."),
    judgments: Path = typer.Option(..., help="CSV of query,product_id,relevance (1..3)."),
    url: str = typer.Option("http://127.0.0.1:8080", help="Base URL of the running search service."),
    token: str = typer.Option(None, envvar="AISLE_TOKEN", help="Bearer token when auth is on."),
    concurrency: int = typer.Option(4, min=1, max=64),
) -> None:
    """NDCG@10 of the running search service on graded judgments (protocol: shared/data/README.md)."""
    from aisle.search.evaluation import evaluate_over_http, load_judgments

    qrels = load_judgments(judgments)
    report = evaluate_over_http(url, tenant, qrels, token=token, concurrency=concurrency)
    typer.echo(
        f"NDCG@10 = {report.ndcg10:.4f} over {report.queries} queries "
        f"({report.skipped} without a relevant judgment skipped; {report.errors} errors)"
    )


def register(app: typer.Typer, eval_app: typer.Typer) -> None:
    app.command("search")(search_cmd)
    eval_app.command("search")(eval_search)
