"""Every process setting is documented on the site's settings page, ``docs/configuration.md`` (the table
the README held before the docs became a site, issue 44)."""

from __future__ import annotations

from pathlib import Path

from aisle.core.config import Settings

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_every_setting_is_on_the_configuration_page() -> None:
    text = PAGE.read_text()
    names = [f"AISLE_{field.upper()}" for field in Settings.model_fields]
    missing = [name for name in names if f"`{name}`" not in text]
    assert not missing, f"settings missing from docs/configuration.md: {missing}"
