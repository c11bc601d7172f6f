"""The console's product page in real Chromium: find a product, change its price, see the new price and
a new row of its change history; a stale change and a refused value show their messages. Screenshots go
to ``conftest.SHOTS``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from tests.services.rules.console.conftest import SEED, ConsoleEnv, shot, sign_in


def history_rows(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "[data-testid=history] tbody tr[data-seq]", "els => els.map(e => e.dataset.seq)"
    )


def test_find_a_product_change_its_price_and_see_the_history(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    sign_in(page, env, env.full_token)
    page.click("header nav a:has-text('Products')")
    page.wait_for_url("**/console/fashion/products")
    page.fill("#product-q", "navy blue shirt")
    page.click("[data-testid=find-product]")
    page.wait_for_selector("[data-testid=found] tr[data-product-id]")
    assert len(page.query_selector_all("[data-testid=found] tr[data-product-id]")) > 1
    shot(page, "20-products-found")
    page.fill("#product-q", SEED)
    page.click("[data-testid=find-product]")
    page.wait_for_selector(f"[data-testid=found] tr[data-product-id='{SEED}'] .pill:has-text('id')")
    page.click(f"[data-testid=found] tr[data-product-id='{SEED}'] a")
    page.wait_for_url(f"**/console/fashion/products/{SEED}")
    assert "no availability attribute" in page.inner_text("[data-testid=why]")
    before = history_rows(page)
    page.fill("#price", "1234.5")
    page.click("[data-testid=save-product]")
    page.wait_for_selector("[data-testid=saved]")
    sequence = page.inner_text("[data-testid=sequence]")
    assert sequence in page.inner_text("[data-testid=saved]")
    assert page.inner_text("[data-testid=fields] dd[data-field=price]").startswith("1,234.50")
    rows = history_rows(page)
    assert len(rows) == len(before) + 1 and rows[0] == sequence.replace(",", "")
    assert "price: 1,234.50" in page.inner_text("[data-testid=history] tbody tr:first-child")
    assert "Changes since" in page.inner_text("[data-testid=covers]")
    stored = httpx.get(
        f"{env.search}/products/{SEED}",
        params={"tenant": "fashion"},
        headers={"authorization": f"Bearer {env.full_token}"},
    ).json()
    assert stored["product"]["price"] == 1234.5  # the search service reads the console's write
    shot(page, "21-product-saved")


def test_a_stale_or_refused_change_shows_its_message(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    product = env.neighbours[0]
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    written = httpx.patch(  # a client's write dated an hour ahead: newer than any change made now
        f"{env.search}/products/{product}",
        params={"tenant": "fashion"},
        json={"price": 777.0, "updateTime": later},
        headers={"authorization": f"Bearer {env.full_token}"},
    )
    assert written.status_code == 200, written.text
    sign_in(page, env, env.full_token)
    page.goto(f"{env.console}/console/fashion/products/{product}")
    page.fill("#price", "100")
    page.click("[data-testid=save-product]")
    page.wait_for_selector("[data-testid=stale]")
    assert "Not saved: stale" in page.inner_text("[data-testid=stale]")
    assert page.inner_text("[data-testid=fields] dd[data-field=price]").startswith("777.00")
    shot(page, "22-product-stale")

    page.eval_on_selector("#price", "e => e.removeAttribute('min')")  # past the browser's own check
    page.fill("#price", "-5")
    page.click("[data-testid=save-product]")
    page.wait_for_selector("[data-testid=failure]")
    assert "422" in page.inner_text("[data-testid=failure]")
    assert "negative" in page.inner_text("[data-error-for=price]")
    assert page.get_attribute("#price", "aria-invalid") == "true"
    shot(page, "23-product-refused")
