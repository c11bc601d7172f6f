"""Saved recommendation rules apply to every answer of a container, via search or predict (no browser)."""

from __future__ import annotations

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
