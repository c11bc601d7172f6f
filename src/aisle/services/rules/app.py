"""The rule management service (port 8085): merchandising rules per tenant, and their preview.

Start with ``uvicorn --factory aisle.services.rules.app:create_app`` (``aisle serve`` does); settings come
from the ``AISLE_*`` environment when none are given. Rules live in object storage; search processes
pick up a change on their next request.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import FastAPI

from aisle import __version__
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.storage import BlobStore
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.rules.book import RuleBooks
from aisle.services.common.errors import install_error_handlers
from aisle.services.common.timing import ServerTimingMiddleware


@dataclass
class RulesState:
    """Resources of one rules-service process (``app.state.rules``).

    ``indexes`` serve validation (filter values, product ids) and previews; ``books`` the live rules
    a preview starts from.
    """

    settings: Settings
    store: BlobStore
    tenants: Tenants
    indexes: IndexRegistry
    books: RuleBooks
    authorizer: Authorizer


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the rule management service (see the module docstring)."""
    settings = settings or load_settings()
    store = open_blob_store_from_settings(settings)
    tenants = Tenants(store)
    state = RulesState(
        settings=settings,
        store=store,
        tenants=tenants,
        indexes=IndexRegistry(tenants, settings.data_dir),
        books=RuleBooks(store),
        authorizer=Authorizer(settings, store),
    )
    app = FastAPI(
        title="Aisle rule management service",
        version=__version__,
        description="Merchandising rules per tenant: conditions (query exact / contains / prefix / regex / "
        "any, time window, user group) and actions (pin, hide, boost, bury, filter, redirect, rewrite). "
        "Every rule has a version; a replace or delete naming a stale version gets 409 "
        "`rule_version_conflict` and changes nothing. `POST /rules/preview` runs a search with and "
        "without a rule. Every endpoint but /health takes the `tenant` query parameter. Errors: "
        '`{"error": {"code", "message", "details"}}`.',
    )
    app.state.rules = state
    app.add_middleware(ServerTimingMiddleware)
    install_error_handlers(app)
    from aisle.services.rules.routes import build_router

    app.include_router(build_router(state))
    return app
