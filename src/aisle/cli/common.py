"""What every ``aisle`` sub-command shares: the error printer, the tenant lookup, and how a list option
is read.

The progress line lives in :mod:`aisle.core.progress` (the demo builds print it too).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
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


def names(values: Iterable[str], known: Collection[str], option: str) -> list[str]:
    """The names a list option was given, comma-separated and/or repeated (``--only search,auth`` is
    ``--only search --only auth``), in order, without repeats.

    Raises:
        typer.BadParameter: a name not in ``known``, or a value naming nothing (``--only ","``); the
            command line then prints the usage error and exits with status 2.
    """
    given = list(values)
    chosen: list[str] = []
    for value in given:
        for name in (part.strip() for part in value.split(",")):
            if name and name not in chosen:
                chosen.append(name)
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise typer.BadParameter(
            f"unknown {', '.join(repr(n) for n in unknown)}; choose from {', '.join(known)}",
            param_hint=f"'{option}'",
        )
    if given and not chosen:
        raise typer.BadParameter(f"names nothing; choose from {', '.join(known)}", param_hint=f"'{option}'")
    return chosen
