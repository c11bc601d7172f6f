"""Spelling candidates: comparing only words of a reachable length finds what the whole vocabulary does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import OSA

from aisle.core.tenant_config import TypoConfig
from aisle.search import spelling
from aisle.search.spelling import SpellingCorrector, typo_distance

LETTERS = st.text(alphabet="abcdeilnorst", min_size=1, max_size=11)


@st.composite
def near_words(draw: st.DrawFn, word: str) -> str:
    """``word`` with up to two letters deleted, inserted or changed (lengths differ by up to 2)."""
    out = word
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(out)))
        edit = draw(st.sampled_from(["delete", "insert", "change"]))
        letter = draw(st.sampled_from("abcdeilnorst"))
        if edit == "delete" and out:
            out = out[:at] + out[at + 1 :]
        elif edit == "insert":
            out = out[:at] + letter + out[at:]
        elif out:
            out = out[:at] + letter + out[at + 1 :]
    return out or letter


@settings(max_examples=300, deadline=None)
@given(word=st.text(alphabet="abcdeilnorst", min_size=3, max_size=11), data=st.data())
def test_candidates_are_the_nearest_then_most_frequent_of_the_whole_vocabulary(
    word: str, data: st.DataObject
) -> None:
    others = data.draw(st.lists(LETTERS, max_size=100))
    near = data.draw(st.lists(near_words(word), min_size=1, max_size=30))
    vocabulary = {w: data.draw(st.integers(1, 50)) for w in [*others, *near]}
    speller = SpellingCorrector(vocabulary)
    typo = TypoConfig()
    found = speller.candidates(word, typo, limit=5)
    edits = typo_distance(word, typo)
    if word in vocabulary or edits == 0:
        assert found == []
        return
    brute = sorted(
        ((w, int(OSA.distance(word, w))) for w in vocabulary if OSA.distance(word, w) <= edits),
        key=lambda m: (m[1], -vocabulary[m[0]], m[0]),
    )
    assert found == brute[:5]


def test_the_typo_rule_tolerates_words_of_letters_alone_by_length() -> None:
    """The one typo rule: letters alone, 1 edit from 4 letters and 2 from 8 (the defaults), never a word
    with a digit or another character, nothing when typo tolerance is off."""
    typo = TypoConfig()
    words = ["tee", "shoe", "sandal", "sneakers", "x2000", "2000", "men s", "t-shirt", "l'oreal", "sneakers2"]
    assert [typo_distance(w, typo) for w in words] == [0, 1, 1, 2, 0, 0, 0, 0, 0, 0]
    assert typo_distance("sneakers", typo.model_copy(update={"enabled": False})) == 0
    assert typo_distance("shoe", typo.model_copy(update={"min_length_one_typo": 5})) == 0


def test_spelling_and_the_typo_stage_share_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spelling correction and the typo stage's fuzzy expansion both ask the one rule: changed in one
    place, both follow (here: no word tolerated)."""
    from aisle.search.stages import retrieve

    assert retrieve.typo_distance is typo_distance
    speller = SpellingCorrector({"sneakers": 3})
    assert speller.candidates("sneakres", TypoConfig()) == [("sneakers", 1)]
    assert speller.candidates("sneakers2", TypoConfig()) == []  # a digit: as typed, as in retrieval
    monkeypatch.setattr(spelling, "typo_distance", lambda word, typo: 0)
    assert speller.candidates("sneakres", TypoConfig()) == []
