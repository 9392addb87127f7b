"""Compose interpolation, as `docker compose` applies it to every string of a compose file.

`$$` is a literal `$`; `$NAME` and `${NAME}` expand (unset: empty); `${NAME:-x}` / `${NAME-x}`
give a default when unset or empty / unset; `${NAME:+x}` / `${NAME+x}` replace when set and
non-empty / set; `${NAME:?msg}` / `${NAME?msg}` are errors when unset or empty / unset. Defaults,
replacements and messages are themselves interpolated, so `${A:-${B:-0}}` nests.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ProfilegenError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = (":-", ":+", ":?", "-", "+", "?")
_SPECIAL = re.compile(r"\$")
_SPECIAL_CLOSING = re.compile(r"[$}]")


class InterpolationError(ProfilegenError):
    """A `${VAR?message}` whose variable is missing, or text Compose cannot read."""

    exit_code = 2


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """The string Compose hands to the container for `text` under `env`."""
    out, _ = _expand(text, 0, env, closing=False)
    return out


def interpolate_all(value: Any, env: Mapping[str, str]) -> Any:
    """Every string inside a parsed compose document, interpolated (keys stay as written)."""
    if isinstance(value, str):
        return interpolate(value, env)
    if isinstance(value, dict):
        return {k: interpolate_all(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate_all(v, env) for v in value]
    return value


def referenced_names(text: str) -> set[str]:
    """Every variable name an interpolation in `text` may read."""
    names = set()
    for match in re.finditer(r"\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*))", text):
        if match.group(1) != "$":
            names.add(match.group(2) or match.group(3))
    return names


def _expand(text: str, pos: int, env: Mapping[str, str], *, closing: bool) -> tuple[str, int]:
    """Expands from `pos` to the end (or to the `}` that closes a nested default)."""
    out: list[str] = []
    special = _SPECIAL_CLOSING if closing else _SPECIAL
    while True:
        found = special.search(text, pos)
        if found is None:
            if closing:
                raise InterpolationError(f"unclosed '${{' in {text!r}")
            out.append(text[pos:])
            return "".join(out), len(text)
        out.append(text[pos : found.start()])
        pos = found.start()
        if text[pos] == "}":
            return "".join(out), pos
        nxt = text[pos + 1 : pos + 2]
        if nxt == "$":
            out.append("$")
            pos += 2
        elif nxt == "{":
            value, pos = _braced(text, pos + 2, env)
            out.append(value)
        elif (name := _NAME.match(text, pos + 1)) is not None:
            out.append(env.get(name.group(), ""))
            pos = name.end()
        else:
            out.append("$")  # a lone `$` (end of text, `$1`, `$ `) stays as written
            pos += 1


def _braced(text: str, pos: int, env: Mapping[str, str]) -> tuple[str, int]:
    name = _NAME.match(text, pos)
    if name is None:
        raise InterpolationError(f"invalid interpolation format in {text!r}")
    key, pos = name.group(), name.end()
    if text[pos : pos + 1] == "}":
        return env.get(key, ""), pos + 1
    operator = next((op for op in _OPERATORS if text.startswith(op, pos)), None)
    if operator is None:
        raise InterpolationError(f"invalid interpolation format in {text!r}")
    arg, pos = _expand(text, pos + len(operator), env, closing=True)
    value = env.get(key)
    empty_counts = operator.startswith(":")
    present = value is not None and (value != "" or not empty_counts)
    if operator.endswith("-"):
        result = value if present and value is not None else arg
    elif operator.endswith("+"):
        result = arg if present else ""
    else:
        if not present:
            raise InterpolationError(f"required variable {key} is missing a value: {arg}")
        result = value or ""
    return result, pos + 1
