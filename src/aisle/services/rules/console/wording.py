"""The API's validation messages, as sentences a merchandiser reads next to a field.

The APIs answer schema errors with pydantic's wording ("String should have at most 2000 characters",
"List should have at least 1 item after validation, not 0"), right for a developer and cryptic in a
form. :func:`humane` rewrites the common ones and leaves any other message as it is.
"""

from __future__ import annotations

import re

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^String should have at most (\d+) characters?$"), "Too long: at most {0} characters."),
    (re.compile(r"^String should have at least 1 character$"), "Required: this cannot be empty."),
    (re.compile(r"^String should have at least (\d+) characters$"), "Too short: at least {0} characters."),
    (re.compile(r"^String should match pattern .*$"), "Contains characters that are not allowed here."),
    (re.compile(r"^List should have at least 1 item.*$"), "Add at least one."),
    (re.compile(r"^List should have at least (\d+) items.*$"), "Add at least {0}."),
    (re.compile(r"^List should have at most (\d+) items?.*$"), "Too many: at most {0}."),
    (re.compile(r"^Input should be greater than or equal to (\S+)$"), "Must be {0} or more."),
    (re.compile(r"^Input should be less than or equal to (\S+)$"), "Must be {0} or less."),
    (re.compile(r"^Input should be greater than (\S+)$"), "Must be more than {0}."),
    (re.compile(r"^Input should be less than (\S+)$"), "Must be less than {0}."),
    (re.compile(r"^Input should be a valid (integer|number).*$"), "Must be a number."),
    (re.compile(r"^Input should be a valid boolean.*$"), "Must be yes or no."),
    (re.compile(r"^Input should be a valid datetime.*$"), "Must be a date and time."),
    (re.compile(r"^Input should be (.+)$"), "Must be {0}."),
    (re.compile(r"^Field required$"), "Required."),
    (re.compile(r"^Extra inputs are not permitted$"), "Not a field this form knows."),
    (re.compile(r"^Value error, (.+)$"), "{0}"),
]


def humane(message: str) -> str:
    """``message`` as a sentence, when it is one of pydantic's usual phrasings; else unchanged."""
    for pattern, sentence in _RULES:
        m = pattern.match(message.strip())
        if m is not None:
            text = sentence.format(*m.groups())
            return text[0].upper() + text[1:] if text else message
    return message


BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Unicode bidirectional formatting characters (UAX #9): an embedded U+202E (right-to-left override)
makes "invoice\u202etxt.exe" display as "invoiceexe.txt"."""


def visible_controls(value: object) -> object:
    """Every ``{{ ... }}`` output of the console (Jinja's ``finalize``): a string's bidirectional
    formatting characters are shown as ``[U+202E]``, so a name displays as what it is (CVE-2021-42574,
    "Trojan Source"). Markup the templates built themselves is left alone."""
    if isinstance(value, str) and not hasattr(value, "__html__") and BIDI_CONTROLS.search(value):
        return BIDI_CONTROLS.sub(lambda m: f"[U+{ord(m.group()):04X}]", value)
    return value
