"""Text normalisation: unit spellings, and the shortcuts (digit check, cache) change no output."""

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from aisle.search import normalize as module
from aisle.search.normalize import normalize


def every_substitution(text: str) -> str:
    """The normalisation with every pattern applied, as written before the shortcuts."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = module._DIGIT_ALPHA.sub(" ", text)
    text = module._INCH.sub(r"\1 in ", text)
    text = module._FOOT.sub(r"\1 ft ", text)
    text = module._SQFT.sub(" sq ft ", text)
    for pattern, repl in module._UNITS:
        text = pattern.sub(repl, text)
    text = module._PUNCT.sub(" ", text)
    text = module._LOOSE.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip()


EXAMPLES = [
    '1/2" Copper Pipe, 10 ft.',
    "8' x 4' Sheet 60W bulb 120-Volt 15 amps",
    "Square Feet: 40 sq. ft. sqft",
    "2x4 Lumber 5 gallons 3 lbs 12 oz",
    "Crème Brûlée Café ²",  # NFKD turns the superscript into a digit
    "Nike Men Black Roshe Run",
    "",
]


def test_units_and_accents_are_spelled_one_way():
    assert normalize('1/2" Copper Pipe, 10 ft.') == "1/2 in copper pipe 10 ft"
    assert normalize("Crème Brûlée") == "creme brulee"
    assert normalize("2x4 60W") == "2 x 4 60 watt"


def test_the_shortcuts_change_no_output_on_examples():
    for text in EXAMPLES:
        assert normalize(text) == every_substitution(text), text
        assert normalize(text * 20) == every_substitution(text * 20), text  # past the cached length


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab xyz19/.-\"'ftinlbozwvgasq²é")), max_size=90))
def test_the_shortcuts_change_no_output(text):
    assert normalize(text) == every_substitution(text)
