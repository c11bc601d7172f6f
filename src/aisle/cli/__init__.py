"""The ``aisle`` command line. Each area registers its own commands from its ``cli`` module.

Heavy imports happen inside the commands, so ``aisle --help`` stays fast.
"""

from __future__ import annotations

import logging

import typer

app = typer.Typer(
    help="Aisle: retail search and recommendations.", no_args_is_help=True, add_completion=False
)
eval_app = typer.Typer(help="Offline evaluation (NDCG@10, HR@20, ...).", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


def register_commands() -> None:
    """Add every area's commands to :data:`app` (once per process: ``main`` does, and a test driving
    ``app`` in-process)."""
    from aisle.cli.auth import register as register_auth
    from aisle.cli.catalog import register as register_catalog
    from aisle.cli.demo import register as register_demo
    from aisle.cli.openapi import register as register_openapi
    from aisle.cli.ranker import register as register_ranker
    from aisle.cli.recs import register as register_recs
    from aisle.cli.search import register as register_search
    from aisle.cli.serve import register as register_services
    from aisle.cli.suggest import register as register_suggest
    from aisle.cli.tenant import register as register_tenant
    from aisle.cli.vectors import register as register_vectors

    register_catalog(app)
    register_tenant(app)  # after catalog: it adds `tenant create` to the tenant group made there
    register_demo(app)
    register_search(app, eval_app)
    register_ranker(app)
    register_recs(app, eval_app)
    register_services(app)
    register_auth(app)
    register_suggest(app)
    register_vectors(app)
    register_openapi(app)


def main() -> None:
    """Entry point of the ``aisle`` script."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    register_commands()
    app()


if __name__ == "__main__":
    main()
