"""What every ``aisle`` sub-command shares: the error printer and the tenant lookup.

The progress line lives in :mod:`aisle.core.progress` (the demo builds print it too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import typer

from aisle.core.errors import AisleError

if TYPE_CHECKING:
    from aisle.core.config import Settings
    from aisle.core.tenancy import Tenants


def fail(error: AisleError | str) -> NoReturn:
    """Print ``error [code]: message`` (or ``error: text``) in red on stderr and exit with status 2."""
    text = f"error [{error.code}]: {error.message}" if isinstance(error, AisleError) else f"error: {error}"
    typer.secho(text, fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def settings_and_tenants() -> tuple[Settings, Tenants]:
    """Process settings (``AISLE_*``) and the tenants of their object store, without a config cache
    (a CLI run must see what another process wrote a moment ago)."""
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants

    settings = load_settings()
    return settings, Tenants(open_blob_store_from_settings(settings), ttl=0)
