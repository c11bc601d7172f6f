"""Request parameters shared by every service, so each is declared and validated by one rule."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from aisle.core.tenancy import TENANT_NAME

TENANT_PATTERN = TENANT_NAME.pattern
"""A tenant name: 1-64 lowercase letters, digits, ``-`` or ``_``, starting with a letter or digit."""

TenantQuery = Annotated[
    str,
    Query(
        pattern=TENANT_PATTERN,
        description="Tenant the request is scoped to (1-64 lowercase letters, digits, '-' or '_').",
        examples=["fashion"],
    ),
]
"""The ``?tenant=`` query parameter of every service; a name outside the pattern is a 422."""
