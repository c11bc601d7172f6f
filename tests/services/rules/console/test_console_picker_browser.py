"""The product picker in real Chromium: a rule's pin, its hidden products and a container preview's seed
are found by typing words (title and photo shown) and filled with the chosen product's id, by keyboard
or mouse; a saved pin shows its product's title when the rule is opened again."""

from __future__ import annotations

from typing import Any

from tests.services.rules.console.conftest import ConsoleEnv, shot, sign_in


def choices(page: Any, field: Any) -> list[dict[str, str]]:
    """The picker's choices under ``field`` once they are shown: ``{id, title}`` each."""
    field.locator("xpath=..").locator(".picks li[role=option]").first.wait_for()
    return (
        field.locator("xpath=..")
        .locator(".picks li[role=option]")
        .evaluate_all("els => els.map(e => ({id: e.dataset.id, title: e.dataset.title}))")
    )


def test_pins_hidden_products_and_seeds_are_picked_by_words(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    sign_in(page, env, env.full_token)
    page.click("[data-testid=new-rule]")
    page.fill("#name", "Linen first")
    page.fill("#new_id", "linen-first")
    page.select_option("#q_match", "contains")
    page.fill("#q_value", "shirt")
    page.click("[data-testid=add-pin]")
    pin = page.locator(".action[data-action-type=pin] .pin-row input[data-product-picker]").first
    pin.press_sequentially("linen shirt", delay=20)
    shown = choices(page, pin)
    assert len(shown) >= 3 and all(c["title"] != c["id"] for c in shown)
    photos = page.locator(".picks li[role=option] img, .picks li[role=option] .ph.none")
    assert photos.count() == len(shown)  # a photo, or a blank where the product has none
    shot(page, "15-product-picker")
    pin.press("ArrowDown")
    pin.press("ArrowDown")
    pin.press("Enter")  # the second choice, by keyboard; the form is not sent
    assert pin.input_value() == shown[1]["id"]
    picked = page.locator(".action[data-action-type=pin] .picked").first
    assert picked.inner_text() == shown[1]["title"]
    page.locator(".action[data-action-type=pin] input[aria-label=position]").first.fill("1")

    page.click("[data-testid=add-hide]")
    hide = page.locator(".action[data-action-type=hide] input[data-product-picker]")
    hide.press_sequentially("linen shirt", delay=20)
    third = choices(page, hide)[2]
    page.locator(".action[data-action-type=hide] .picks li[role=option]").nth(2).click()
    assert page.locator(".action[data-action-type=hide] textarea").input_value() == third["id"]
    assert hide.input_value() == ""  # ready for the next one

    page.click("[data-testid=save]")
    page.wait_for_selector("text=Saved as version 1")
    page.goto(env.console + "/console/fashion/rules/linen-first")
    page.wait_for_function(
        "t => document.querySelector('.action[data-action-type=pin] .picked')?.textContent === t",
        arg=shown[1]["title"],
    )  # the stored pin's title, looked up by its id

    page.goto(env.console + "/console/fashion/containers/pdp")
    seed = page.locator("input[aria-label='seed product']")
    seed.press_sequentially("10000", delay=20)  # an id: that product first, with its photo
    first = choices(page, seed)[0]
    assert first["id"] == "10000" and page.locator(".picks li[role=option]").first.locator("img").count() == 1
    page.locator(".picks li[role=option]").first.click()
    assert seed.input_value() == "10000"
    page.click("[data-testid=rec-preview]")
    page.wait_for_selector("#rec-preview")
