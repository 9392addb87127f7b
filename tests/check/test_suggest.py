"""A did-you-mean is difflib's answer, however it is reached."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from profilegen.errors import suggest

NAMES = st.text(alphabet="VLM_ABCDEFGHKPTUX", min_size=0, max_size=14)


@settings(max_examples=300, deadline=None)
@given(word=NAMES, choices=st.lists(NAMES, max_size=40))
def test_the_closest_choice_is_difflibs(word: str, choices: list[str]) -> None:
    expected = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    assert suggest(word, choices) == (expected[0] if expected else None)


def test_among_equally_close_choices_the_greater_one_is_named() -> None:
    assert suggest("VLLM_AB", ["VLLM_AC", "VLLM_AD"]) == "VLLM_AD"
    assert suggest("VLLM_AB", ["VLLM_AD", "VLLM_AC"]) == "VLLM_AD"
    assert suggest("zzz", ["VLLM_AD"]) is None
