"""Bounded JSON reading, for every JSON file profilegen did not just make itself.

Python's parser recurses per nesting level (a 2,000-deep list is a RecursionError), takes
NaN and Infinity, turns `1e999` into an infinite float and fails on integers past 4,300
digits with an unlocated ValueError. `load_json` checks the text first, as `safeyaml.py` does for
YAML: at most MAX_DEPTH levels, MAX_TEXT characters, finite numbers of at most MAX_DIGITS
digits. Every refusal is a `JsonProblem`, a `json.JSONDecodeError` with the line and column
that broke the limit, so a reader that handles malformed JSON handles these the same way.
"""

from __future__ import annotations

import errno
import json
import math
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

from .files import NotRegular, file_kind, read_regular

# The nesting YAML may have (safeyaml.MAX_DEPTH; not imported: that module loads ruamel).
MAX_DEPTH = 64
MAX_TEXT = 16 * 2**20  # characters
MAX_DIGITS = 40  # in an integer, or in a number's whole part
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRINGS = re.compile(_STRING)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_TOKENS = re.compile(rf"{_STRING}|[\[\]{{}}]|-?[0-9][0-9.eE+-]*|NaN|-?Infinity")


class JsonProblem(json.JSONDecodeError):
    """JSON that breaks a limit: `msg` says which, `lineno` and `colno` where."""


def load_json(text: str | bytes, *, limit: int = MAX_TEXT) -> Any:
    """The data in `text`, or JsonProblem (a json.JSONDecodeError) with its line."""
    if isinstance(text, bytes):
        raw = text
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonProblem("not UTF-8 text", raw.decode("latin-1"), exc.start) from None
    if len(text) > limit:
        raise JsonProblem(f"{len(text):,} characters, more than the {limit:,} read", text, 0)
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    if brackets and max(accumulate(map(_STEP.__getitem__, brackets))) > MAX_DEPTH:
        message, pos = _first_bad(text)
        raise JsonProblem(message, text, pos)
    try:
        return json.loads(
            text, parse_float=_finite, parse_int=_integer, parse_constant=_refuse_constant
        )
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError):
        # A non-finite or overlong number (the parser does not say where): found again.
        message, pos = _first_bad(text)
        raise JsonProblem(message, text, pos) from None


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value) or len(literal.split(".")[0].lstrip("-")) > MAX_DIGITS:
        raise ValueError(literal)
    return value


def _integer(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_DIGITS:
        raise ValueError(literal)
    return int(literal)


def _refuse_constant(literal: str) -> float:
    raise ValueError(literal)


def _first_bad(text: str) -> tuple[str, int]:
    """What the text first breaks (too deep, a number it may not hold), and where."""
    depth = 0
    for token in _TOKENS.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels", token.start()
        elif mark in "]}":
            depth -= 1
        elif not mark.startswith('"') and (problem := _bad_number(mark)):
            return problem, token.start()
    return "a number it cannot hold", 0


def _bad_number(mark: str) -> str | None:
    whole = re.split(r"[.eE]", mark.lstrip("-"), maxsplit=1)[0]
    if len(whole) > MAX_DIGITS:
        return f"a number {len(whole):,} digits long (at most {MAX_DIGITS})"
    try:
        finite = math.isfinite(float(mark))
    except ValueError:
        return None
    return None if finite else f"the number {mark[:20]}, which is not finite"


def load_json_file(path: Path, limit: int = MAX_TEXT) -> Any:
    """The data in a regular file (a FIFO is refused, not waited on) of at most `limit`
    bytes: OSError when it cannot be read, JsonProblem when it is not such JSON."""
    try:
        raw, size = read_regular(path, limit)
    except NotRegular as exc:
        raise OSError(
            errno.EINVAL, f"is {file_kind(exc.mode)}, not a regular file", str(path)
        ) from None
    if len(raw) > limit:
        raise JsonProblem(f"{size:,} bytes, more than the {limit:,} read", "", 0)
    return load_json(raw, limit=limit)
