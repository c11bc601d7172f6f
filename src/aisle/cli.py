"""The ``aisle`` command line. Each area registers its own commands from its ``cli`` module.

Heavy imports happen inside the commands, so ``aisle --help`` stays fast.
"""

from __future__ import annotations

import logging

import typer

app = typer.Typer(help="Aisle: retail search and recommendations.", no_args_is_help=True, add_completion=False)


def _register() -> None:
    from aisle.catalog.cli import register as register_catalog
    from aisle.search.cli import register as register_search
    from aisle.services.cli import register as register_services

    register_catalog(app)
    register_search(app)
    register_services(app)


def main() -> None:
    """Entry point of the ``aisle`` script."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _register()
    app()


if __name__ == "__main__":
    main()
