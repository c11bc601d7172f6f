"""What every ``aisle`` sub-command shares: the error printer, a progress line and the tenant lookup."""

from __future__ import annotations

import sys
import time
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


class ProgressLine:
    """A one-line progress display on stderr: ``index  30000/44441  67%``."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.start = time.perf_counter()

    def __call__(self, stage: str, done: int, total: int) -> None:
        pct = f"{100 * done // total:3d}%" if total else ""
        end = "\n" if done >= total else ""
        sys.stderr.write(
            f"\r{self.label}: {stage:<6} {done:>8}/{total:<8} {pct} "
            f"{time.perf_counter() - self.start:6.1f}s{end}"
        )
        sys.stderr.flush()
