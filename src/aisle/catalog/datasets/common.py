"""Configuration defaults shared by the demo tenants."""

from __future__ import annotations

from pydantic import BaseModel

from aisle.core.tenant_config import (
    AttributeConfiguration,
    AutocompleteConfiguration,
    CrsConfig,
    GlobalConfiguration,
    UserGroup,
    UserGroupConfiguration,
)


def tenant_files(attributes: AttributeConfiguration, global_: GlobalConfiguration) -> dict[str, BaseModel]:
    """The five files of a demo tenant, with default autocomplete, CRS (off) and user groups."""
    return {
        "attribute_configuration.json": attributes,
        "autocomplete_configuration.json": AutocompleteConfiguration(),
        "crs_config.json": CrsConfig(),
        "global_configuration.json": global_,
        "user_group_configuration.json": UserGroupConfiguration(
            groups=[
                UserGroup(id="vip", description="Loyalty members"),
                UserGroup(id="new", description="First visit"),
            ]
        ),
    }
