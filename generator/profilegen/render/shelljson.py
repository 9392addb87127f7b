"""JSON arguments whose values come partly from environment variables at boot."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from .quoting import Shell


@dataclass(frozen=True)
class Slot:
    """A JSON value read from a validated variable when the entrypoint runs."""

    env: str
    kind: str  # "number", "bool" or "word"


def _parts(value: Any) -> list[str | Slot]:
    if isinstance(value, Slot):
        return ['"', value, '"'] if value.kind == "word" else [value]
    if isinstance(value, dict):
        out: list[str | Slot] = ["{"]
        for i, (key, item) in enumerate(value.items()):
            out += [("," if i else "") + json.dumps(str(key)) + ":", *_parts(item)]
        return [*out, "}"]
    if isinstance(value, list | tuple):
        out = ["["]
        for i, item in enumerate(value):
            out += ([","] if i else []) + _parts(item)
        return [*out, "]"]
    return [json.dumps(value, ensure_ascii=False)]


def json_word(value: Any) -> Shell:
    """One shell word that expands to compact JSON, slots filled from variables.

    Slot variables are validated by the entrypoint before use (numbers, booleans or
    plain words), so their expansion can never break out of the JSON string.
    """
    merged: list[str | Slot] = []
    for part in _parts(value):
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return Shell(
        "".join(f'"${{{p.env}}}"' if isinstance(p, Slot) else shlex.quote(p) for p in merged)
    )
