"""Saved recommendation rules apply to every answer of a container, via search or predict (no browser)."""

from __future__ import annotations

import json
import re

import httpx
from tests.services.rules.console.conftest import SEED, ConsoleEnv


def test_recommendations_attach_the_containers_saved_rules(console_env: ConsoleEnv) -> None:
    env = console_env
    auth = {"authorization": f"Bearer {env.full_token}"}
    t = {"tenant": "fashion"}
    ask = {"containerId": "pdp", "productIds": [SEED], "predictParams": {"returnScore": True}}
    before = httpx.post(f"{env.search}/recommendations", params=t, json=ask, headers=auth).json()[
        "response_data"
    ]
    kept = before[2]["id"]  # a product that is not first without rules
    container = httpx.get(f"{env.edit}/containers/pdp", params=t, headers=auth).json()
    boost = {"type": "BOOST", "weight": 5, "condition": {"op": "in", "field": "id", "value": [kept]}}
    saved = httpx.put(
        f"{env.edit}/containers/pdp",
        params=t,
        json={**container, "recommendationRules": [boost]},
        headers=auth,
    )
    assert saved.status_code == 200, saved.text
    after = httpx.post(f"{env.search}/recommendations", params=t, json=ask, headers=auth).json()[
        "response_data"
    ]
    assert after[0]["id"] == kept
    # the request's own actions come after the saved ones, and both apply
    bury = {"type": "BURY", "weight": 50, "condition": {"op": "in", "field": "id", "value": [kept]}}
    both = httpx.post(
        f"{env.search}/recommendations", params=t, json={**ask, "actions": [bury]}, headers=auth
    ).json()["response_data"]
    ids = [i["id"] for i in both]
    assert kept not in ids[:-1]  # buried below every other item, or out of the 10 served
    # predict called directly (no search service) applies the container's saved rules too
    direct = httpx.post(f"{env.predict}/predict", params=t, json=ask, headers=auth).json()["response_data"]
    assert direct == after
    too_many = httpx.post(
        f"{env.search}/recommendations", params=t, json={**ask, "actions": [bury] * 50}, headers=auth
    )
    assert too_many.status_code == 400 and too_many.json()["error"]["code"] == "value_invalid"


def test_the_console_preview_shows_no_rules_then_the_edited_ones_not_the_saved_ones_twice(
    console_env: ConsoleEnv,
) -> None:
    """Predict applies a container's saved rules itself, so the preview asks it to leave them out:
    "without" is the bare model, "with" the rules as edited in place of the saved ones."""
    from aisle.services.rules.console.session import COOKIE, LOGIN_NONCE, csrf_token

    env = console_env
    auth = {"authorization": f"Bearer {env.full_token}"}
    t = {"tenant": "fashion"}
    ask = {"containerId": "pdp", "productIds": [SEED], "predictParams": {"containerRules": False}}
    bare = httpx.post(f"{env.predict}/predict", params=t, json=ask, headers=auth).json()["response_data"]
    kept = bare[2]["id"]
    boost = {"type": "BOOST", "weight": 5, "condition": {"op": "in", "field": "id", "value": [kept]}}
    bury = {**boost, "type": "BURY", "weight": 50}
    container = httpx.get(f"{env.edit}/containers/pdp", params=t, headers=auth).json()
    saved = {**container, "recommendationRules": [bury]}  # saved: bury it; edited: boost it
    assert httpx.put(f"{env.edit}/containers/pdp", params=t, json=saved, headers=auth).status_code == 200
    with httpx.Client(base_url=env.console) as console:
        console.get("/console/login")
        nonce = console.cookies[LOGIN_NONCE]
        signed_in = console.post("/console/login", data={"nonce": nonce, "token": env.full_token})
        assert signed_in.status_code == 303, signed_in.text
        csrf = csrf_token(console.cookies[COOKIE])
        form = {"seed": SEED, "rules_json": json.dumps([boost]), "csrf": csrf}
        page = console.post("/console/fashion/containers/pdp/preview", data=form)
    assert page.status_code == 200 and "rec-preview-error" not in page.text, page.text[:500]
    without, with_rules = page.text.split('data-testid="rec-with"')
    ids_without = re.findall(r'data-product-id="([^"]+)"', without)
    ids_with = re.findall(r'data-product-id="([^"]+)"', with_rules)
    assert ids_without == [i["id"] for i in bare]  # the saved bury is left out of "without"
    assert ids_with[0] == kept  # the edited boost alone: with the saved bury too it would sink
