"""Plain YAML output of data for `show` (block style, keys in insertion order)."""

from __future__ import annotations

from typing import Any

from ..registry.yamltext import dump_plain


def dump_yaml(data: Any) -> str:
    return dump_plain(data)
