"""``aisle openapi --out DIR``: each service's OpenAPI document as ``DIR/<service>.json``.

The documents ``make clients`` generates the Python client (openapi-python-client) and the TypeScript
types (openapi-typescript) from. Each app is built over an empty temporary bucket (nothing is read or
started: only ``app.openapi()`` runs), so no service needs to be up.
"""

from __future__ import annotations

import importlib
import inspect
import tempfile
from pathlib import Path
from typing import Any

import orjson
import typer

from aisle.cli.common import names
from aisle.cli.serve import SERVICES


def service_documents(only: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """``{service: OpenAPI document}`` of every service of ``aisle serve`` (or those in ``only``)."""
    from aisle.core.config import Settings

    wanted = [s for s in SERVICES if not only or s[0] in only]
    documents: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="aisle-openapi-") as tmp:
        settings = Settings(storage_url=f"file://{tmp}/bucket", data_dir=Path(tmp) / "data")
        for name, module, _ in wanted:
            factory = importlib.import_module(module).create_app
            kwargs = {"preload": False} if "preload" in inspect.signature(factory).parameters else {}
            documents[name] = factory(settings, **kwargs).openapi()
    return documents


def openapi(
    out: Path = typer.Option(Path("clients/openapi"), help="Directory for <service>.json."),
    only: list[str] = typer.Option([], "--only", help="Only these services (comma-separated or repeated)."),
) -> None:
    """Write each service's OpenAPI document to ``OUT/<service>.json`` (sorted keys, 2-space indent)."""
    chosen = names(only, [s[0] for s in SERVICES], "--only") if only else None
    out.mkdir(parents=True, exist_ok=True)
    for name, document in service_documents(chosen).items():
        path = out / f"{name}.json"
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
        typer.echo(f"{name}: {path} ({len(document.get('paths', {}))} paths)")


def register(app: typer.Typer) -> None:
    """Add the ``openapi`` command."""
    app.command("openapi")(openapi)
