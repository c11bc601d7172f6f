"""Signing in with a token for several tenants in real Chromium: the chooser lists them, each line
fills in its figures by itself, and choosing one lands on its rules."""

from __future__ import annotations

from typing import Any

from tests.services.rules.console.conftest import ConsoleEnv, shot


def test_a_sign_in_lands_on_the_tenant_chooser(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    page.goto(env.console + "/")
    page.fill("#token", env.kit.token(["fashion", "outlet"], client_id="two-shops"))
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("[data-testid=tenant-fashion]")  # its line loaded
    fashion = page.inner_text("[data-testid=tenant-fashion]")
    assert "fashion" in fashion and "none yet" in fashion, fashion
    page.wait_for_selector("[data-testid=tenant-outlet]")
    assert "Not set up" in page.inner_text("[data-testid=tenant-outlet]")  # named by the token only
    shot(page, "14-tenants")
    page.click("[data-testid=tenant-fashion] a.tenant-link")
    page.wait_for_url("**/console/fashion/rules")
    page.click("a.logo")
    page.wait_for_url("**/console/")
