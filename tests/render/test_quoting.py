"""Compose values: every string reads back as itself, a trailing line break included."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from profilegen.render.quoting import yaml_string


@settings(max_examples=100, deadline=None)
@given(st.text())
@example("A\n")  # `$` in a Python pattern also matches before a final line break
@example("on")
def test_every_string_reads_back_as_itself(text: str) -> None:
    assert YAML(typ="safe").load(f"k: {yaml_string(text)}\n")["k"] == text
