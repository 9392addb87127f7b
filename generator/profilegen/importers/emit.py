"""Registry documents as YAML text: block style, short mappings and lists in flow style."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..render.quoting import yaml_string

FLOW_WIDTH = 96
# Mappings written on one line whatever their length, by the key they are under.
FLOW_KEYS = {"profiles": frozenset({"source", "best_for_source", "exposures_source"})}
# How a key path's value is laid out: "flow" (one line) or "block".
Styles = Mapping[tuple[str, ...], str]
SCHEMAS = {
    "engines": "engine",
    "models": "model",
    "drafters": "drafter",
    "patches": "patch",
    "rigs": "rig",
    "gpus": "gpu",
    "profiles": "profile",
}


def document(
    kind: str, data: dict[str, Any], header: list[str], styles: Styles | None = None
) -> str:
    """A registry file: the schema modeline, header comments, then the data; a value at a key
    path `styles` names is written in that style ("flow": on the key's line whatever its
    length; "block": on lines of its own)."""
    lines = [f"# yaml-language-server: $schema=../../schema/{SCHEMAS[kind]}.schema.json"]
    lines += [f"# {line}" if line else "#" for line in header]
    lines += _mapping(data, 0, (), styles or {}, FLOW_KEYS.get(kind, frozenset()))
    return "\n".join(lines) + "\n"


def scalar(value: Any) -> str:
    if value is None:
        return "~"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return yaml_string(str(value))


def _flow(value: Any, width: float = FLOW_WIDTH) -> str | None:
    """The value on one line, or None when it does not fit."""
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            inner = _flow(item, width)
            if inner is None:
                return None
            parts.append(f"{scalar(key)}: {inner}")
        text = "{" + ", ".join(parts) + "}"
    elif isinstance(value, list):
        items = [_flow(item, width) for item in value]
        if any(item is None for item in items):
            return None
        text = "[" + ", ".join(str(item) for item in items) + "]"
    else:
        return scalar(value)
    return text if len(text) <= width else None


def _mapping(
    data: dict[str, Any],
    indent: int,
    path: tuple[str, ...],
    keep: Styles,
    flow_keys: frozenset[str] = frozenset(),
) -> list[str]:
    pad = " " * indent
    lines = []
    for key, value in data.items():
        here = (*path, str(key))
        style = keep.get(here) or ("flow" if key in flow_keys and isinstance(value, dict) else None)
        flow = _flow_or_none(value, style, top=indent == 0)
        if flow is not None:
            lines.append(f"{pad}{scalar(key)}: {flow}")
        elif isinstance(value, dict):
            lines.append(f"{pad}{scalar(key)}:")
            lines += _mapping(value, indent + 2, here, keep, flow_keys)
        else:
            lines.append(f"{pad}{scalar(key)}:")
            lines += _sequence(value, indent + 2, here, keep, flow_keys)
    return lines


def _flow_or_none(value: Any, style: str | None, top: bool = False) -> str | None:
    """The value on one line, or None for block style. Top-level mappings are blocks; other
    values go on one line if they fit, unless the file being replaced laid them out otherwise."""
    if style == "flow":
        return _flow(value, float("inf"))
    if (
        isinstance(value, dict | list)
        and value
        and (style == "block" or top and isinstance(value, dict))
    ):
        return None
    return _flow(value)


def _sequence(
    items: list[Any],
    indent: int,
    path: tuple[str, ...],
    keep: Styles,
    flow_keys: frozenset[str] = frozenset(),
) -> list[str]:
    pad = " " * indent
    lines = []
    for item in items:
        here = path
        if isinstance(item, dict) and item:
            # A list item is named by its first line, as the layout of the old file names it.
            here = (*path, f"- {_mapping(item, indent + 2, (), {})[0].lstrip()}")
        flow = _flow_or_none(item, keep.get(here))
        if flow is not None:
            lines.append(f"{pad}- {flow}")
        elif isinstance(item, dict):
            inner = _mapping(item, indent + 2, here, keep, flow_keys)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines += inner[1:]
        else:
            lines += [f"{pad}-"] + _sequence(item, indent + 2, path, keep, flow_keys)
    return lines
