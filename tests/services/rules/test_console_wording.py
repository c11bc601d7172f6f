"""What a merchandiser met in the console: messages as sentences, a too-long description explained,
names with bidirectional controls shown as they are, product cards without a photo labelled."""

from __future__ import annotations

from fastapi.testclient import TestClient
from tests.services.rules.test_console_http import rule_form, sign_in

from aisle.services.rules.console.wording import humane, visible_controls


def test_pydantic_wording_becomes_sentences() -> None:
    assert humane("String should have at most 2000 characters") == "Too long: at most 2000 characters."
    assert humane("List should have at least 1 item after validation, not 0") == "Add at least one."
    assert (
        humane("String should match pattern '^[a-z]+$'") == "Contains characters that are not allowed here."
    )
    assert humane("Input should be greater than or equal to 1") == "Must be 1 or more."
    assert humane("Field required") == "Required."
    assert humane("the rule's id is taken") == "the rule's id is taken"  # not pydantic's: unchanged


def test_bidi_controls_are_shown_not_obeyed() -> None:
    assert visible_controls("invoice\u202etxt.exe") == "invoice[U+202E]txt.exe"
    assert visible_controls("a\u2066b\u2069") == "a[U+2066]b[U+2069]"
    assert visible_controls("plain") == "plain" and visible_controls(3) == 3


def test_a_too_long_description_is_explained_next_to_its_field(client: TestClient) -> None:
    csrf = sign_in(client)
    page = client.post("/console/fashion/rules/save", data=rule_form(csrf, description="x" * 10_000))
    assert page.status_code == 200
    assert 'data-error-for="description"' in page.text
    assert "Too long: at most 2000 characters." in page.text
    assert "x" * 10_000 in page.text  # the draft is kept, nothing is lost
    assert client.get("/console/fashion/rules").text.count("Nike first") == 0  # and nothing was saved


def test_a_name_with_a_right_to_left_override_displays_as_it_is(client: TestClient) -> None:
    csrf = sign_in(client)
    saved = client.post("/console/fashion/rules/save", data=rule_form(csrf, name="invoice\u202etxt.exe"))
    assert saved.status_code == 200, saved.text
    listing = client.get("/console/fashion/rules").text
    assert "invoice[U+202E]txt.exe" in listing and "\u202e" not in listing


def test_preview_of_a_rule_without_an_action_shows_the_plain_results(client: TestClient) -> None:
    csrf = sign_in(client)
    form = {k: v for k, v in rule_form(csrf).items() if not k.startswith(("act", "ak1"))}
    page = client.post("/console/fashion/preview", data={**form, "pq": "shoes"})
    assert page.status_code == 200
    assert 'data-testid="no-action"' in page.text and 'data-testid="preview-error"' not in page.text
    assert page.text.count('class="pcard') >= 2  # the live results, on both sides
    api = client.post(
        "/rules/preview", params={"tenant": "fashion"}, json={"search": {"query": "shoes", "size": 5}}
    )
    assert api.status_code == 200, api.text
    body = api.json()
    assert body["changes"]["fired"] is False and body["changes"]["added"] == []
    assert [p["id"] for p in body["withoutRule"]["products"]] == [
        p["id"] for p in body["withRule"]["products"]
    ]
