"""What a tunable's value may be when the entrypoint reads it: the same rules as its guards
(templates/entrypoint/helpers.sh.j2 renders its limits from here), so that a registry default
is held at load to what every boot will hold it to.

A value's length is capped before any pattern is matched: bash matches a pattern by recursion,
character by character, so ~100 KB overflow its stack (a segfault, exit 139, without a word)
and a long number takes seconds to match. A number must also be finite and no larger than the
registry's own numbers, and a nonzero one no smaller than a float holds (1e-37 is a normal
single-precision float; a smaller one may round to 0 in the engine).
"""

from __future__ import annotations

import json
import re
from typing import Any

# The longest value of each type of tunable; the other variables the entrypoint reads (SPEC,
# CUDA_VISIBLE_DEVICES, the patch folders, ...) are held to LONGEST_INPUT, an API key to
# LONGEST_KEY.
LONGEST = {"int": 64, "float": 64, "bool": 64, "word": 1024, "path": 4096, "text": 4096}
LONGEST_INPUT = 4096
LONGEST_SWITCH = 64  # SPEC and the draft width
LONGEST_KEY = 4096
# The registry's cap on every number (registry/safeyaml.py MAX_NUMBER).
LARGEST = 2**53
# A nonzero number is at least 10**SMALLEST_EXPONENT in size.
SMALLEST_EXPONENT = -37
LARGEST_TEXT = f"{LARGEST:,}"
SMALLEST_TEXT = f"1e{SMALLEST_EXPONENT}"

# The entrypoint's patterns (pg_check), as regular expressions.
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_WORD = re.compile(r"[A-Za-z0-9_.:,+-]+")
_BOOLS = frozenset({"1", "true", "yes", "on", "0", "false", "no", "off"})


def format_default(value: Any, kind: str) -> str:
    """The text of a default as it appears in `${VAR:-default}` and in .env.example."""
    if isinstance(value, bool):
        return ("1" if value else "0") if kind == "switch" else ("true" if value else "false")
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        # llama.cpp's `-ts 0.55,0.45` (and `1,1`): a list default is one comma-separated word.
        return ",".join(
            f"{item:g}" if isinstance(item, float) else format_default(item, kind) for item in value
        )
    return str(value)


def value_problem(text: str, kind: str) -> str | None:
    """What the entrypoint says of `text` as a value of a `kind` tunable (the words after the
    variable's name), or None when it takes it."""
    longest = LONGEST.get(kind, LONGEST_INPUT)
    if len(text) > longest:
        return f"must be at most {longest} characters long, got {len(text)}"
    if kind == "int" and not _INT.fullmatch(text):
        return f"must be a whole number, got '{text}'"
    if kind == "float" and not _FLOAT.fullmatch(text):
        return f"must be a number, got '{text}'"
    if kind == "word" and not _WORD.fullmatch(text):
        return f"must be a plain word, got '{text}'"
    if kind == "bool" and text.lower() not in _BOOLS:
        return f"must be true or false (1/0), got '{text}'"
    if kind in ("int", "float"):
        return number_problem(text)
    return None


def number_problem(text: str) -> str | None:
    """Whether a number (of the int or float pattern) is finite and in range, worked out on
    its digits as the entrypoint does (pg_finite): no exponent can overflow."""
    power = _power(text)
    if power is None:
        return None
    places = len(str(LARGEST))
    if power > places or (power == places and _digits(text) > str(LARGEST)):
        return f"must be a finite number at most {LARGEST_TEXT} in size, got '{text}'"
    if power <= SMALLEST_EXPONENT:
        return f"must be 0 or at least {SMALLEST_TEXT} in size, got '{text}'"
    return None


def _split(text: str) -> tuple[str, str, str]:
    """(integer digits, fraction digits, exponent) of a number's text, without its sign."""
    mantissa, _, exponent = text.lstrip("-").replace("E", "e").partition("e")
    whole, _, fraction = mantissa.partition(".")
    return whole, fraction, exponent


def _digits(text: str) -> str:
    """The significant digits, padded or cut to LARGEST's places, then a 1 for any nonzero
    that follow (a number of as many places is compared with LARGEST as text)."""
    whole, fraction, _ = _split(text)
    digits = (whole + fraction).lstrip("0")
    places = len(str(LARGEST))
    head, rest = digits[:places].ljust(places, "0"), digits[places:]
    return head + ("1" if rest.strip("0") else "")


def _power(text: str) -> int | None:
    """The power of ten just above the number (10**(p-1) <= |x| < 10**p), or None for 0; an
    exponent of more than six digits counts as a million places, far past any bound."""
    whole, fraction, exponent = _split(text)
    whole = whole.lstrip("0")
    if not (whole + fraction).strip("0"):
        return None
    power = len(whole) if whole else -(len(fraction) - len(fraction.lstrip("0")))
    sign = -1 if exponent.startswith("-") else 1
    exponent = exponent.lstrip("+-").lstrip("0")
    if len(exponent) > 6:
        return sign * 10**6
    return power + sign * int(exponent or "0")
