"""The storefront (/shop/) in Debian's chromium: a shopper types, sees suggestions and hits, refines by
brand and price, pages, opens a product with its recommendations, clicks and buys (and analytics shows
the click and the purchase with the hit's position), and searches by photo. Auth is on: the page gets
its read-only token from the service. Screenshots go to $AISLE_SCREENSHOTS (default
<tmp>/aisle-storefront-screenshots)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import require
from tests.support.storefront import StorefrontEnv, bundle_built, storefront_env
from tests.support.waiting import wait_until

from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(
    os.environ.get("AISLE_SCREENSHOTS", Path(tempfile.gettempdir()) / "aisle-storefront-screenshots")
)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[StorefrontEnv]:
    require(bundle_built(), "the storefront is not bundled (make install runs npm ci and npm run build)")
    root = tmp_path_factory.mktemp("storefront")
    with storefront_env(root, shared_data, tmp_path_factory.getbasetemp() / "vectors-mini") as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require(CHROMIUM.exists(), f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "the playwright package is not installed")
        raise
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
        )
        yield b
        b.close()


def _shop(browser: Any, env: StorefrontEnv, **context: Any) -> Iterator[Any]:
    """The fashion shop open in a new browser context (``context``: its viewport and options), its
    first hits shown; no page error may happen while the test uses it."""
    ctx = browser.new_context(**context)
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(f"{env.search}/shop/?tenant=fashion")
    pg.wait_for_selector("[data-testid=hit]")
    yield pg
    ctx.close()
    assert errors == [], errors


@pytest.fixture
def page(browser: Any, env: StorefrontEnv) -> Iterator[Any]:
    yield from _shop(browser, env, viewport={"width": 1400, "height": 1000})


def shot(page: Any, name: str, *, full: bool = True) -> None:
    """A screenshot of the whole page (``full``) or of the screen."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full)


def count(page: Any) -> int:
    text = page.inner_text("[data-testid=stats]")
    m = re.search(r"([\d,]+) results?", text)
    assert m, text
    return int(m.group(1).replace(",", ""))


def search_for(page: Any, query: str) -> None:
    page.fill("#q", "")
    page.type("#q", query, delay=30)
    page.wait_for_function(f"document.body.dataset.renderedQuery === {query!r}")


def test_typing_shows_suggestions_and_hits(page: Any) -> None:
    page.click("#q")
    page.type("#q", "shi", delay=40)
    page.wait_for_function("document.body.dataset.renderedQuery === 'shi'")
    suggestions = page.locator("#suggestions [role=option]")
    suggestions.first.wait_for()
    assert page.is_visible("#suggestions")
    texts = [t.lower() for t in suggestions.all_inner_texts()]
    assert texts and all("shi" in t for t in texts), texts
    assert page.locator("#suggestions mark").count() > 0  # the typed prefix is highlighted
    shot(page, "01-suggestions")
    picked = suggestions.first.get_attribute("data-query")
    suggestions.first.click()
    page.wait_for_function(f"document.body.dataset.renderedQuery === {picked!r}")
    assert page.input_value("#q") == picked
    assert page.locator("[data-testid=hit]").count() > 0
    assert page.locator("[data-testid=hits] mark").count() > 0


def test_refining_by_brand_and_price_changes_the_counts(page: Any) -> None:
    total = count(page)
    brand = page.locator("#brand .ais-RefinementList-item").first
    name = brand.locator(".ais-RefinementList-labelText").inner_text()
    facet_count = int(brand.locator(".ais-RefinementList-count").inner_text())
    page.click(f"#brand input[value='{name}']")
    page.wait_for_function(f"!document.querySelector('[data-testid=stats]').innerText.startsWith('{total} ')")
    assert count(page) == facet_count < total
    brands = page.locator("[data-testid=hit] .brandname").all_inner_texts()
    assert brands and set(brands) == {name}
    # a second brand: disjunctive, the count adds up
    second = page.locator("#brand .ais-RefinementList-item:not(.ais-RefinementList-item--selected)").first
    second_name = second.locator(".ais-RefinementList-labelText").inner_text()
    second_count = int(second.locator(".ais-RefinementList-count").inner_text())
    page.click(f"#brand input[value='{second_name}']")
    page.wait_for_function(
        f"document.querySelector('[data-testid=stats]').innerText.startsWith('{facet_count + second_count} ')"
    )
    both = count(page)
    # a price range: the placeholders are the bounds of the match set; keep the lower half
    low = float(page.get_attribute("#price input >> nth=0", "placeholder"))
    high = float(page.get_attribute("#price input >> nth=1", "placeholder"))
    assert low < high
    cap = int((low + high) / 2)
    page.fill("#price input >> nth=1", str(cap))
    page.click("#price button")
    page.wait_for_function(f"!document.querySelector('[data-testid=stats]').innerText.startsWith('{both} ')")
    assert count(page) < both
    prices = [
        float(re.sub(r"[^\d.]", "", p)) for p in page.locator("[data-testid=hit] .price").all_inner_texts()
    ]
    assert prices and max(prices) <= cap
    shot(page, "02-refined")


def test_a_follow_up_question_shows_as_chips_and_a_chip_narrows_the_hits(page: Any) -> None:
    """Guided search: a broad result asks one question above the hits; a chip answers it as a filter."""
    total = count(page)
    question = page.locator("[data-testid=follow-up]")
    question.wait_for()
    attribute = question.get_attribute("data-attribute")
    chip = question.locator("button.chip").first
    value = chip.get_attribute("data-value")
    option_count = int(chip.locator("small").inner_text().replace(",", ""))
    assert page.locator("[data-testid=follow-up] button.chip").count() >= 2
    shot(page, "02b-follow-up")
    chip.click()
    page.wait_for_function(f"!document.querySelector('[data-testid=stats]').innerText.startsWith('{total} ')")
    assert count(page) == option_count < total
    assert value in page.inner_text("#current")  # the answer is an ordinary, removable refinement
    asked = page.locator(f"[data-testid=follow-up][data-attribute='{attribute}']")
    assert asked.count() == 0  # the same question is not asked again


def test_paginating(page: Any) -> None:
    first = page.locator("[data-testid=hit]").first.get_attribute("data-id")
    page.click(".ais-Pagination-item--page >> text='2'")
    page.wait_for_function("document.querySelector('[data-testid=hit]').dataset.position === '13'")
    assert page.locator("[data-testid=hit]").first.get_attribute("data-id") != first
    assert page.locator(".ais-Pagination-item--selected").inner_text() == "2"


def test_a_product_page_shows_recommendations(page: Any) -> None:
    page.locator("[data-testid=hit]").nth(1).click()
    page.wait_for_selector("[data-testid=product]")
    for container in ("similar-items", "good-better-best"):
        page.locator(f"[data-testid=recs-{container}] [data-testid=rec]").first.wait_for()
    shown = page.get_attribute("[data-testid=product]", "data-id")
    recs = page.locator("[data-testid=recs-similar-items] [data-testid=rec]")
    assert recs.count() == 8 and shown not in [recs.nth(i).get_attribute("data-id") for i in range(8)]
    shot(page, "03-product")
    nxt = recs.first.get_attribute("data-id")
    recs.first.click()
    page.wait_for_selector(f"[data-testid=product][data-id='{nxt}']")


def _analytics(env: StorefrontEnv, path: str, **params: Any) -> list[dict[str, Any]]:
    day = datetime.now(UTC).date().isoformat()
    r = httpx.get(
        f"{env.analytics}/analytics/{path}",
        params={"tenant": "fashion", "from": day, "to": day, **params},
        headers={"Authorization": f"Bearer {env.analytics_token}"},
    )
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return items


def test_a_click_and_a_purchase_reach_analytics_with_their_position(page: Any, env: StorefrontEnv) -> None:
    query = "black"
    search_for(page, query)
    hit = page.locator("[data-testid=hit]").nth(2)
    assert hit.get_attribute("data-position") == "3"
    hit.click()
    page.wait_for_selector("[data-testid=product]")
    page.click("[data-testid=buy]")
    page.wait_for_selector("[data-testid=event-status] >> text=Purchase sent")
    shot(page, "04-bought")

    def recorded() -> dict[str, Any] | None:
        rows = {r["query"]: r for r in _analytics(env, "searches", limit=500)}
        positions = {r["position"]: r["clicks"] for r in _analytics(env, "positions")}
        row = rows.get(query)
        return (
            row
            if row and row["clicks"] >= 1 and row["conversions"] >= 1 and positions.get(3, 0) >= 1
            else None
        )

    row = wait_until(
        recorded, f"the search {query!r}, its click at position 3 and the purchase are in analytics"
    )
    # the helper's facet queries and price probes are not counted as searches
    assert row["searches"] <= len(query) + 1


def test_searching_by_photo(page: Any, env: StorefrontEnv) -> None:
    require(env.tenant.has_images, "the photo model is not installed (the image extra)")
    target = env.tenant.ids[5]
    page.set_input_files("[data-testid=photo-input]", str(env.tenant.images_dir / f"{target}.jpg"))
    page.locator("[data-testid=photo-hit]").first.wait_for()
    assert page.locator("[data-testid=photo-hit]").first.get_attribute("data-id") == target
    shot(page, "05-photo")
    page.locator("[data-testid=photo-hit]").first.click()
    page.wait_for_selector(f"[data-testid=product][data-id='{target}']")


def test_typing_cordless_dr_shows_drills_in_the_grid_and_the_suggestions(
    page: Any, env: StorefrontEnv
) -> None:
    """Search as you type (the adapter's queryType 'prefixLast' is the API's prefix): the unfinished
    last word matches the words beginning with it, so the grid shows what the suggestions offer."""
    page.goto(f"{env.search}/shop/?tenant=homedepot")
    page.wait_for_selector("[data-testid=hit]")
    page.click("#q")
    page.type("#q", "cordless dr", delay=30)
    page.wait_for_function("document.body.dataset.renderedQuery === 'cordless dr'")
    suggestions = page.locator("#suggestions [role=option]")
    suggestions.first.wait_for()
    offered = [t.lower() for t in suggestions.evaluate_all("els => els.map(e => e.dataset.query)")]
    titles = [t.lower() for t in page.locator("[data-testid=hit] .title").all_inner_texts()]
    # both read 'cordless' and a word beginning with 'dr' (drill, driver): grid and suggestions agree
    for shown in (offered, titles):
        assert shown and all("cordless" in t and re.search(r"\bdr\w+", t) for t in shown), shown
    assert len(titles) == 12 and sum("drill" in t for t in titles) >= 8, titles
    assert count(page) < 100  # the words typed, not the whole catalog
    shot(page, "09-prefix-homedepot")


def test_the_url_keeps_the_query_refinements_page_and_tenant_across_a_reload_and_a_share(
    page: Any, browser: Any, env: StorefrontEnv
) -> None:
    """InstantSearch routing: the state is in the URL (/shop/?tenant=fashion&q=...&brand=...&page=2),
    so a reload shows the same hits and a link opened elsewhere too."""
    search_for(page, "men")
    total = count(page)
    brand = page.locator("#brand .ais-RefinementList-item").first
    name = brand.locator(".ais-RefinementList-labelText").inner_text()
    page.click(f"#brand input[value='{name}']")
    page.wait_for_function(f"!document.querySelector('[data-testid=stats]').innerText.startsWith('{total} ')")
    refined = count(page)
    assert refined > 12, f"two pages of {name} for 'men' ({refined})"
    page.select_option("#sort select", label="Price: low to high")
    page.wait_for_function("location.search.includes('sort=price_asc')")
    page.click(".ais-Pagination-item--page >> text='2'")
    page.wait_for_function("document.querySelector('[data-testid=hit]').dataset.position === '13'")
    page.wait_for_function("location.search.includes('page=2')")
    url = page.url
    assert "tenant=fashion" in url and "q=men" in url and f"brand={name.replace(' ', '+')}" in url, url
    assert "sort=price_asc" in url, url
    shown = page.locator("[data-testid=hit]").evaluate_all("els => els.map(e => e.dataset.id)")

    def same_state(pg: Any) -> None:
        pg.wait_for_function("document.querySelector('[data-testid=hit]')?.dataset.position === '13'")
        assert pg.input_value("#q") == "men"
        assert pg.is_checked(f"#brand input[value='{name}']")
        assert pg.locator(".ais-Pagination-item--selected").inner_text() == "2"
        assert pg.input_value("#sort select") == "fashion:price_asc"
        assert count(pg) == refined
        assert pg.locator("[data-testid=hit]").evaluate_all("els => els.map(e => e.dataset.id)") == shown

    page.reload()
    same_state(page)
    shared = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    shared.goto(url)
    same_state(shared)
    shot(shared, "10-shared-url")
    # a product page and back: the results are where they were
    shared.locator("[data-testid=hit]").first.click()
    shared.wait_for_selector("[data-testid=product]")
    assert "page=2" in shared.url and "#/product/" in shared.url
    shared.go_back()
    shared.locator("[data-testid=product-view]").wait_for(state="hidden")
    same_state(shared)
    shared.context.close()
    # another tenant's link keeps its tenant
    page.goto(f"{env.search}/shop/?tenant=homedepot&q=drill")
    page.wait_for_function("document.body.dataset.renderedQuery === 'drill'")
    assert page.input_value("#tenant") == "homedepot"
    assert page.input_value("#q") == "drill"


def _wait_for_chips(page: Any, fields: str) -> None:
    """Until the understood-filter chips are those of ``fields`` (comma-separated, in order)."""
    page.wait_for_function(
        "f => [...document.querySelectorAll('[data-testid=understood] .uchip')].map(e => e.dataset.field)"
        ".join() === f",
        arg=fields,
    )


def test_the_filters_query_understanding_applied_show_as_chips(page: Any) -> None:
    """The answer's queryGraph: a colour, a category and a price named in the query filter the strict
    answer, and the page says so; a looser stage only ranks by them, and no chip claims a filter. Each
    chip can be removed: the next search sets that attribute aside (ignoreUnderstood), in the URL too,
    until the query changes."""
    search_for(page, "black tshirts under 1500")
    chips = page.locator("[data-testid=understood] .uchip")
    chips.first.wait_for()
    assert [t.replace("×", "").strip() for t in chips.all_inner_texts()] == [
        "Colour: Black",
        "Category: Tshirts",
        "Price: up to ₹1,500",
    ]
    assert chips.evaluate_all("els => els.map(e => e.dataset.field)") == ["color", "category", "price"]
    titles = page.locator("[data-testid=hit] .title").all_inner_texts()
    prices = [
        float(re.sub(r"[^\d.]", "", p)) for p in page.locator("[data-testid=hit] .price").all_inner_texts()
    ]
    assert titles and all("black" in t.lower() for t in titles) and max(prices) <= 1500
    shot(page, "13-understood")
    before = count(page)
    # removing the price chip: the same words, no price filter
    page.locator("[data-testid=understood] button[data-remove=price]").click()
    _wait_for_chips(page, "color,category")
    page.wait_for_function(
        f"Number(document.querySelector('[data-testid=stats]').innerText.replace(/\\D/g, '')) > {before}"
    )  # more black tshirts: the price no longer filters
    assert page.input_value("#q") == "black tshirts under 1500"
    # what was set aside is in the URL: a reload (or a shared link) keeps it
    page.wait_for_function("new URLSearchParams(location.search).getAll('ignore').join() === 'price'")
    aside = count(page)
    page.reload()
    _wait_for_chips(page, "color,category")
    assert count(page) == aside and page.input_value("#q") == "black tshirts under 1500"
    search_for(page, "white tshirts under 1000")  # strict found 5: answered by the relaxed stage
    page.wait_for_function("!new URLSearchParams(location.search).has('ignore')")  # a new query reads afresh
    page.locator("[data-testid=understood]").wait_for(state="hidden")


def test_a_query_without_results_says_so_offers_other_searches_and_a_way_back(
    page: Any, env: StorefrontEnv
) -> None:
    """No product: 'No results for ...', what to search instead and a way back, never a count, facets
    or a price range of an empty answer."""
    search_for(page, "qwrtzp")
    title = page.locator("[data-testid=no-results-title]")
    title.wait_for()
    assert title.inner_text() == "No results for \u201cqwrtzp\u201d"
    for empty_part in ("#brand", "#price", "[data-testid=stats]", "[data-testid=pagination] li"):
        assert not page.is_visible(empty_part), empty_part
    categories = page.locator("[data-testid=popular] button")
    categories.first.wait_for()
    assert set(categories.all_inner_texts()) == {"Apparel", "Footwear", "Accessories"}
    assert page.locator("[data-testid=popular-brands] button").count() >= 3
    shot(page, "14-no-results")
    page.click("[data-testid=popular] button >> text=Footwear")
    page.wait_for_selector("[data-testid=hit]")
    page.wait_for_function("location.search === '?tenant=fashion&category=Footwear'")
    assert page.input_value("#q") == ""
    assert page.is_hidden("[data-testid=no-results]") and 0 < count(page) < 120
    search_for(page, "qwrtzp")
    page.click("[data-testid=browse-all]")
    page.wait_for_selector("[data-testid=hit]")
    assert count(page) == 120  # the whole small catalog
    # an empty answer because of the filters: named, with a way to drop them, and the words' alternatives
    page.goto(f"{env.search}/shop/?tenant=fashion&q=puma+shoes&color=Magenta")
    page.wait_for_selector("[data-testid=no-results-title] >> text=with these filters")
    assert page.inner_text("[data-testid=no-results-filters]") == "Colour: Magenta"
    page.locator("[data-testid=alternatives] button").first.wait_for()
    offered = page.locator("[data-testid=alternatives] button").all_inner_texts()
    assert "Puma" in offered and any("Shoes" in o for o in offered), offered
    page.click("[data-testid=clear-filters]")
    page.wait_for_selector("[data-testid=hit]")
    page.wait_for_function("location.search === '?tenant=fashion&q=puma+shoes'")
    assert page.input_value("#q") == "puma shoes"
    # a shop without facets offers its popular searches
    page.goto(f"{env.search}/shop/?tenant=homedepot&q=qwrtzp")
    page.locator("[data-testid=popular] button").first.wait_for()
    page.click("[data-testid=popular] button >> text=paint")
    page.wait_for_function("document.body.dataset.renderedQuery === 'paint'")
    assert count(page) > 0 and page.is_hidden("[data-testid=no-results]")


def test_a_cart_kept_across_reloads_with_quantities_and_a_checkout_of_one_purchase_per_line(
    page: Any,
) -> None:
    """The cart lives in localStorage: lines, quantities and the total survive a reload; the simulated
    checkout sends one purchase event per line (its price, quantity and the search it was found by)."""
    sent: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda r: (
            sent.extend(r.post_data_json["events"]) if r.url.split("?")[0].endswith("/shop/events") else None
        ),
    )
    search_for(page, "black")
    picked = []
    for n in (0, 2):
        hit = page.locator("[data-testid=hit]").nth(n)
        picked.append((hit.get_attribute("data-id"), hit.locator(".title").inner_text()))
        hit.click()
        page.wait_for_selector(f"[data-testid=product][data-id='{picked[-1][0]}']")
        page.click("[data-testid=add-to-cart]")
        page.wait_for_selector("[data-testid=view-cart]")
        page.go_back()
        page.wait_for_selector("[data-testid=hit]")
    assert page.inner_text("[data-testid=cart] .count") == "2"
    page.reload()
    page.wait_for_selector("[data-testid=hit]")
    assert page.get_attribute("[data-testid=cart]", "aria-label") == "Cart, 2 items"
    page.click("[data-testid=cart]")
    lines = page.locator("[data-testid=cart-line]")
    lines.first.wait_for()
    assert lines.evaluate_all("els => els.map(e => e.dataset.id)") == [i for i, _ in picked]
    lines.nth(0).locator("[data-act=inc]").click()
    lines.nth(0).locator("[data-act=inc]").click()
    lines.nth(1).locator("[data-testid=quantity]").fill("2")
    lines.nth(1).locator("[data-testid=quantity]").press("Tab")
    page.wait_for_function("document.querySelector('[data-testid=cart] .count').textContent === '5'")
    unit = [float(re.sub(r"[^\d.]", "", lines.nth(i).locator(".unit").inner_text())) for i in range(2)]
    expected = 3 * unit[0] + 2 * unit[1]
    assert float(re.sub(r"[^\d.]", "", page.inner_text("[data-testid=cart-total]"))) == expected
    page.reload()  # kept: the cart page itself comes back from the URL, with its quantities
    page.locator("[data-testid=cart-line]").first.wait_for()
    assert page.locator("[data-testid=quantity]").evaluate_all("els => els.map(e => e.value)") == ["3", "2"]
    shot(page, "15-cart")
    sent.clear()
    page.click("[data-testid=checkout]")
    page.wait_for_selector("[data-testid=order-placed]")
    assert "2 purchase events" in page.inner_text("[data-testid=order-placed]")
    purchases = [e for e in sent if e["eventType"] == "purchase"]
    assert [(e["productId"], e["quantity"], e["price"]) for e in purchases] == [
        (picked[0][0], 3, unit[0]),
        (picked[1][0], 2, unit[1]),
    ]
    assert all(e.get("attributionToken") for e in purchases)  # both were found by the search
    assert sorted(e["position"] for e in purchases) == [1, 3]
    assert page.inner_text("[data-testid=cart] .count") == "0"
    page.reload()
    page.wait_for_selector("[data-testid=cart-empty]")


def test_recommendations_are_carousels_and_good_better_best_three_ordered_tiers(page: Any) -> None:
    """Similar items: one row that scrolls (its buttons shown only when it can), not a grid; good, better,
    best: three tiers in that order whatever order the answer gives them, cheapest to dearest."""
    page.locator("[data-testid=hit]").nth(1).click()
    page.wait_for_selector("[data-testid=product]")
    recs = page.locator("[data-testid=recs-similar-items] [data-testid=carousel] [data-testid=rec]")
    recs.first.wait_for()
    tops = {round(b["y"]) for b in recs.evaluate_all("els => els.map(e => e.getBoundingClientRect())")}
    assert recs.count() == 8 and len(tops) == 1, tops  # one row
    track = page.locator("[data-testid=recs-similar-items] .track")
    assert track.evaluate("t => t.scrollWidth > t.clientWidth")
    assert page.is_hidden("[data-testid=recs-similar-items] .prev")
    page.click("[data-testid=recs-similar-items] .next")
    page.wait_for_function(
        "document.querySelector('[data-testid=recs-similar-items] .track').scrollLeft > 100"
    )
    page.locator("[data-testid=recs-similar-items] .prev").wait_for()
    tiers = page.locator("[data-testid=recs-good-better-best] [data-testid=tier]")
    tiers.first.wait_for()
    assert tiers.evaluate_all("els => els.map(e => e.dataset.tier)") == ["good", "better", "best"]
    names = [t.split("\n")[0] for t in tiers.all_inner_texts()]
    assert [n.split()[0] for n in names] == ["GOOD", "BETTER", "BEST"], names
    prices = [
        float(re.sub(r"[^\d.]", "", p))
        for p in page.locator(
            "[data-testid=recs-good-better-best] [data-testid=rec] .price"
        ).all_inner_texts()
    ]
    assert prices == sorted(prices) and prices[0] < prices[-1], prices
    tops = {round(b["y"]) for b in tiers.evaluate_all("els => els.map(e => e.getBoundingClientRect())")}
    assert len(tops) == 1  # side by side
    shot(page, "16-recs")


def test_a_model_still_being_built_shows_a_friendly_placeholder_then_its_items(page: Any) -> None:
    """The service's 503 model_training ('model ... is being trained in the background') becomes words
    for a shopper, and the page asks again after its Retry-After."""
    training = {
        "success": False,
        "response_data": [],
        "error": {
            "code": "model_training",
            "message": "model 'similar-items' is being trained in the background; try again shortly",
        },
    }
    answered = {"503": 0}

    def building(route: Any) -> None:
        if answered["503"] < 1 and "similar-items" in (route.request.post_data or ""):
            answered["503"] += 1
            route.fulfill(status=503, json=training, headers={"Retry-After": "1"})
        else:
            route.continue_()

    page.route("**/recommendations?*", building)
    page.locator("[data-testid=hit]").nth(1).click()
    placeholder = page.locator("[data-testid=recs-similar-items] [data-testid=recs-placeholder]")
    placeholder.wait_for()
    text = placeholder.inner_text()
    assert "preparing" in text and "trained" not in text and "model" not in text, text
    shot(page, "17-recs-building")
    page.locator("[data-testid=recs-similar-items] [data-testid=rec]").first.wait_for()  # asked again
    assert answered["503"] == 1 and placeholder.count() == 0


def test_a_catalog_without_photos_is_a_list_without_an_empty_sidebar(page: Any, env: StorefrontEnv) -> None:
    """Home Depot (titles only, no facets): rows across the page, no 'no photo' squares, no sidebar."""
    page.goto(f"{env.search}/shop/?tenant=homedepot&q=drill")
    page.wait_for_function("document.body.dataset.renderedQuery === 'drill'")
    hits = page.locator("[data-testid=hit]")
    boxes = hits.evaluate_all("els => els.map(e => e.getBoundingClientRect().toJSON())")
    assert boxes[0]["x"] <= 30 and boxes[0]["width"] > 1000, boxes[0]  # from the page's edge, no sidebar
    assert all(b["height"] < 90 for b in boxes) and len({round(b["x"]) for b in boxes}) == 1  # rows
    assert not page.is_visible("[data-testid=filters]") and not page.is_visible(".photo-search")
    assert page.locator("#hits img, #hits .nophoto").count() == 0
    shot(page, "18-homedepot-list")


@pytest.fixture
def phone(browser: Any, env: StorefrontEnv) -> Iterator[Any]:
    """The fashion shop on a 400 x 800 phone screen."""
    yield from _shop(browser, env, viewport={"width": 400, "height": 800}, has_touch=True)


def test_at_phone_width_the_filters_are_a_drawer_and_the_first_product_is_on_the_first_screen(
    phone: Any, page: Any
) -> None:
    """400 px: the facets are behind a Filters button (a modal drawer), so the first product is on the
    first screen instead of under every facet; 1280 px keeps them as the sidebar."""
    first = phone.locator("[data-testid=hit]").first.bounding_box()
    assert first is not None and first["y"] + first["height"] <= 800, first  # the whole first card
    assert phone.evaluate("document.documentElement.scrollWidth") <= 400  # nothing wider than the phone
    assert not phone.is_visible("[data-testid=filters]")
    shot(phone, "11-phone", full=False)
    toggle = phone.locator("[data-testid=filters-toggle]")
    assert toggle.get_attribute("aria-expanded") == "false"
    total = count(phone)
    toggle.click()
    phone.wait_for_selector("[data-testid=filters].open")
    assert phone.is_visible("#brand") and toggle.get_attribute("aria-expanded") == "true"
    assert phone.get_attribute("[data-testid=filters]", "role") == "dialog"
    assert phone.evaluate("document.activeElement.closest('[data-testid=filters]') !== null")
    name = phone.locator("#brand .ais-RefinementList-labelText").first.inner_text()
    phone.click(f"#brand input[value='{name}']")
    phone.wait_for_function(
        f"!document.querySelector('[data-testid=stats]').innerText.startsWith('{total} ')"
    )
    refined = count(phone)
    assert phone.inner_text("[data-testid=filters-done]") == f"Show {refined} results"
    shot(phone, "12-phone-drawer", full=False)
    for _ in range(40):  # Tab stays in the dialog
        phone.keyboard.press("Tab")
        assert phone.evaluate("document.activeElement.closest('[data-testid=filters]') !== null")
    phone.keyboard.press("Escape")
    phone.wait_for_selector("[data-testid=filters]:not(.open)")
    assert phone.evaluate("document.activeElement.dataset.testid") == "filters-toggle"
    assert toggle.get_attribute("aria-label") == "Filters, 1 applied" and "(1)" in toggle.inner_text()
    phone.locator("[data-testid=filters]").wait_for(state="hidden")  # slid out
    # the backdrop and "Show results" close it too
    toggle.click()
    phone.wait_for_selector("[data-testid=filters].open")
    phone.click("[data-testid=filters-backdrop]", position={"x": 390, "y": 400})
    phone.wait_for_selector("[data-testid=filters]:not(.open)")
    # the desktop page has the sidebar, no button
    assert page.is_visible("#brand") and not page.is_visible("[data-testid=filters-toggle]")


AXE = Path(__file__).parents[3] / "clients" / "instantsearch" / "node_modules" / "axe-core" / "axe.min.js"
SEVERE = ("serious", "critical")


def severe_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations of the page as it is now (its script injected)."""
    require(AXE.exists(), "axe-core is not installed (make install runs npm ci in clients/instantsearch)")
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate("axe.run(document, {resultTypes: ['violations']})")["violations"]
    return [
        f"{v['impact']} {v['id']}: {v['help']} {[n['target'] for n in v['nodes']][:5]}"
        for v in found
        if v["impact"] in SEVERE
    ]


def test_axe_finds_no_serious_violation_on_the_search_product_and_cart_pages(page: Any, phone: Any) -> None:
    """axe-core (npm, injected into the page) over the search results, a product page with its
    recommendations and the cart, at 1280 px and, with its drawer open, at 400 px."""
    search_for(page, "shirt")
    page.keyboard.press("Escape")
    assert severe_violations(page) == []
    page.locator("[data-testid=hit]").first.click()
    page.locator("[data-testid=recs-good-better-best] [data-testid=tier]").first.wait_for()
    page.locator("[data-testid=recs-similar-items] [data-testid=rec]").first.wait_for()
    assert severe_violations(page) == []
    page.click("[data-testid=add-to-cart]")
    page.click("[data-testid=cart]")
    page.locator("[data-testid=cart-line]").first.wait_for()
    assert severe_violations(page) == []
    page.click("[data-testid=checkout]")
    page.wait_for_selector("[data-testid=order-placed]")
    assert severe_violations(page) == []
    assert severe_violations(phone) == []
    phone.click("[data-testid=filters-toggle]")
    phone.wait_for_selector("[data-testid=filters].open")
    assert severe_violations(phone) == []


def test_the_suggestions_are_a_combobox_for_the_keyboard(page: Any) -> None:
    """ARIA combobox with a listbox: arrows move the active option (the focus stays in the box), Enter
    takes it, Escape closes the list and then clears the box."""
    box = page.locator("#q")
    assert box.get_attribute("role") == "combobox" and box.get_attribute("aria-controls") == "suggestions"
    assert page.get_attribute("#suggestions", "role") == "listbox"
    box.click()
    box.type("shi", delay=40)
    page.wait_for_function("document.body.dataset.renderedQuery === 'shi'")
    options = page.locator("#suggestions [role=option]")
    options.first.wait_for()
    assert box.get_attribute("aria-expanded") == "true" and options.count() >= 2
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    second = options.nth(1)
    assert box.get_attribute("aria-activedescendant") == second.get_attribute("id")
    assert (
        second.get_attribute("aria-selected") == "true"
        and options.nth(0).get_attribute("aria-selected") == "false"
    )
    page.keyboard.press("ArrowUp")
    first = options.nth(0)
    assert box.get_attribute("aria-activedescendant") == first.get_attribute("id")
    assert page.evaluate("document.activeElement.id") == "q"  # the focus never left the box
    picked = first.get_attribute("data-query")
    assert severe_violations(page) == []  # the open list and its active option too
    shot(page, "19-combobox")
    page.keyboard.press("Enter")
    page.wait_for_function(f"document.body.dataset.renderedQuery === {picked!r}")
    assert box.input_value() == picked and box.get_attribute("aria-expanded") == "false"
    assert page.is_hidden("#suggestions") and box.get_attribute("aria-activedescendant") is None
    box.fill("")
    box.type("nik", delay=40)
    options.first.wait_for()
    page.keyboard.press("Escape")
    assert page.is_hidden("#suggestions") and box.get_attribute("aria-expanded") == "false"
    assert box.input_value() == "nik"
    page.keyboard.press("Escape")
    page.wait_for_function("document.body.dataset.renderedQuery === ''")
    assert box.input_value() == ""


FOCUS_RING = """() => {
  const el = document.activeElement;
  const shown = el.closest('.photo-search') || el;
  const style = getComputedStyle(shown);
  return {testid: el.dataset.testid || el.id || el.className, header: !!el.closest('header'),
          style: style.outlineStyle, width: parseFloat(style.outlineWidth), color: style.outlineColor};
}"""


def test_every_control_shows_its_focus_and_results_are_links_the_keyboard_opens(page: Any) -> None:
    """Tab through the header (navy: a yellow ring), the filters and the results: each focused control
    draws a ring; a result is a link, Enter opens its product page."""
    page.locator("#q").focus()
    for _ in range(5):  # back to the first control of the page, by keyboard
        page.keyboard.press("Shift+Tab")
        if page.evaluate("document.activeElement.classList.contains('brand')"):
            break
    seen = []
    for _ in range(60):
        ring = page.evaluate(FOCUS_RING)
        seen.append(ring)
        assert ring["style"] != "none" and ring["width"] >= 2, ring
        if ring["header"]:
            assert ring["color"] == "rgb(255, 191, 71)", ring  # visible on navy
        if ring["testid"] == "hit":
            break
        page.keyboard.press("Tab")
    assert seen[-1]["testid"] == "hit", seen
    reached = {str(s["testid"]) for s in seen}
    assert {"brand", "tenant", "search-input", "photo-input", "cart"} <= reached, reached
    shot(page, "20-focus", full=False)
    opened = page.evaluate("document.activeElement.dataset.id")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"[data-testid=product][data-id='{opened}']")
    alt = page.get_attribute("[data-testid=product] img", "alt")
    assert alt and alt == page.inner_text("[data-testid=product] h1")  # the photo's alt text is the title
    page.go_back()
    page.locator("[data-testid=hit] img").first.wait_for()
    titles = page.locator("[data-testid=hit] .title").all_inner_texts()
    assert page.locator("[data-testid=hit] img").evaluate_all("els => els.map(e => e.alt)") == titles


def test_a_store_picker_shows_a_store_s_stock_and_is_remembered(page: Any, env: StorefrontEnv) -> None:
    """The picker appears once the tenant's products list store inventory (GET /stores); picking a store
    sends storeId with every search (the tenant's default store setting: only what it has in stock),
    and the choice outlives a reload. Runs last: it gives the module's tenant its only store."""
    assert page.is_hidden("#store")  # no product lists store inventory yet
    ids = page.locator("[data-testid=hit]").evaluate_all("els => els.map(e => e.dataset.id)")[:2]
    tenants = Tenants(open_blob_store(env.settings.storage_url), ttl=0)
    outcome = CatalogWriter(tenants).inventory_batch(
        "fashion", [{"id": i, "storeId": "north", "availability": "IN_STOCK"} for i in ids]
    )
    assert outcome.sequence > 0 and [r.status for r in outcome.results] == ["applied", "applied"]
    token = httpx.get(f"{env.search}/shop/session", params={"tenant": "fashion"}).json()["token"]
    stores = httpx.get(
        f"{env.search}/stores", params={"tenant": "fashion"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert stores.json() == {"stores": ["north"]}, stores.text  # the page's own token reads them
    linked = {"tenant": "fashion", "q": "", "storeId": "north"}
    auth = {"Authorization": f"Bearer {token}"}
    wait_until(
        lambda: httpx.get(f"{env.search}/search", params=linked, headers=auth).json()["total"] == 2,
        "the inventory is searched",
    )
    page.reload()
    page.wait_for_selector("#store:not([hidden])")
    total = count(page)
    page.select_option("#store", "north")
    page.wait_for_function("document.querySelector('[data-testid=stats]').innerText.startsWith('2 ')")
    shown = page.locator("[data-testid=hit]").evaluate_all("els => els.map(e => e.dataset.id)")
    assert sorted(shown) == sorted(ids)
    shot(page, "08-store-picker")
    page.reload()
    page.wait_for_function("document.querySelector('[data-testid=stats]').innerText.startsWith('2 ')")
    assert page.input_value("#store") == "north"
    page.select_option("#store", "")
    assert wait_until(lambda: count(page) == total, "every product again")
