"""Compose text with interpolations: which host variables a word reads, and its default value."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...explain.interpolate import InterpolationError, interpolate
from ...model.common import is_option

_CHAIN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?-")


@dataclass(frozen=True)
class Binding:
    """A whole word that is `${A:-${B:-default}}`: the host variables, then the default."""

    names: tuple[str, ...]
    default: str


def default_value(text: str) -> str:
    """The text as Compose gives it with no host variables set."""
    try:
        return interpolate(text, {})
    except InterpolationError:
        return text


def binding(text: str) -> Binding | None:
    """The variable chain when the whole text is one `${A:-…}` default chain, else None."""
    names: list[str] = []
    rest = text
    while True:
        match = _CHAIN.match(rest)
        if match is None or not rest.endswith("}"):
            break
        names.append(match.group(1))
        rest = rest[match.end() : -1]
    if not names or "${" in rest or "$" in rest.replace("$$", ""):
        return None
    return Binding(tuple(names), rest.replace("$$", "$"))


def split_words(text: str) -> list[str]:
    """A folded `command:` string split on blanks outside `${…}` and quotes."""
    words: list[str] = []
    current: list[str] = []
    depth, quote, i = 0, "", 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == quote:
                quote = ""
            else:
                current.append(char)
        elif char in "'\"" and depth == 0:
            quote = char
        elif text.startswith("${", i):
            depth += 1
            current.append("${")
            i += 2
            continue
        elif char == "}" and depth:
            depth -= 1
            current.append(char)
        elif char.isspace() and depth == 0:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(char)
        i += 1
    if current:
        words.append("".join(current))
    return words


def group_flags(words: list[str]) -> list[tuple[str | None, list[str]]]:
    """(flag, its values) in order; leading positional words under None."""
    out: list[tuple[str | None, list[str]]] = []
    for word in words:
        if is_option(word) and not word.startswith("${"):
            out.append((word, []))
        elif out:
            out[-1][1].append(word)
        else:
            out.append((None, [word]))
    return out
