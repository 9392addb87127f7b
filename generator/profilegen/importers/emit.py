"""Registry documents as YAML text: block style, short mappings and lists in flow style."""

from __future__ import annotations

import json
from typing import Any

from ..render.quoting import yaml_string

FLOW_WIDTH = 96
SCHEMAS = {
    "engines": "engine",
    "models": "model",
    "drafters": "drafter",
    "patches": "patch",
    "rigs": "rig",
    "gpus": "gpu",
    "profiles": "profile",
}


def document(kind: str, data: dict[str, Any], header: list[str]) -> str:
    """A registry file: the schema modeline, header comments, then the data."""
    lines = [f"# yaml-language-server: $schema=../../schema/{SCHEMAS[kind]}.schema.json"]
    lines += [f"# {line}" if line else "#" for line in header]
    lines += _mapping(data, 0)
    return "\n".join(lines) + "\n"


def scalar(value: Any) -> str:
    if value is None:
        return "~"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return yaml_string(str(value))


def _flow(value: Any) -> str | None:
    """The value on one line, or None when it does not fit."""
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            inner = _flow(item)
            if inner is None:
                return None
            parts.append(f"{scalar(key)}: {inner}")
        text = "{" + ", ".join(parts) + "}"
    elif isinstance(value, list):
        items = [_flow(item) for item in value]
        if any(item is None for item in items):
            return None
        text = "[" + ", ".join(str(item) for item in items) + "]"
    else:
        return scalar(value)
    return text if len(text) <= FLOW_WIDTH else None


def _mapping(data: dict[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for key, value in data.items():
        # Top-level mappings stay in block style; everything else goes on one line if it fits.
        flow = None if indent == 0 and isinstance(value, dict) and value else _flow(value)
        if flow is not None:
            lines.append(f"{pad}{scalar(key)}: {flow}")
        elif isinstance(value, dict):
            lines.append(f"{pad}{scalar(key)}:")
            lines += _mapping(value, indent + 2)
        else:
            lines.append(f"{pad}{scalar(key)}:")
            lines += _sequence(value, indent + 2)
    return lines


def _sequence(items: list[Any], indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for item in items:
        flow = _flow(item)
        if flow is not None:
            lines.append(f"{pad}- {flow}")
        elif isinstance(item, dict):
            inner = _mapping(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines += inner[1:]
        else:
            lines += [f"{pad}-"] + _sequence(item, indent + 2)
    return lines
