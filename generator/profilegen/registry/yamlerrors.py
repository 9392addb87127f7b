"""A YAML syntax error as a reader needs it: the line and column of the mistake, the parser's
words, and for the common slips (a tab in the indentation, a quote never closed, a key
indented wrongly, a value holding ': ') a one-line hint that says what to do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ruamel.yaml.error import MarkedYAMLError

TAB = "found a tab character in the indentation"
TAB_HINT = "YAML indents with spaces only: replace the tab with spaces"
KEY = re.compile(r":(\s|$)")  # a key's colon: followed by a space or the end of the line
QUOTES = {
    '"': 'close the value with " (a " inside it is written \\")',
    "'": "close the value with ' (a ' inside it is written '')",
}


@dataclass(frozen=True)
class Syntax:
    line: int | None
    column: int | None
    message: str
    hint: str | None = None


def syntax_error(error: MarkedYAMLError, text: str) -> Syntax:
    """Where the mistake is and what it is; a hint for the slips people make."""
    lines = text.split("\n")
    problem = TAB if _tab(error, lines) else error.problem or error.context or "malformed YAML"
    # At the end of the stream (a quote or bracket never closed) the problem mark points past
    # the last line; the context mark says where the construct began.
    at_end = "end of stream" in (error.problem or "")
    mark = (error.context_mark if at_end else None) or error.problem_mark or error.context_mark
    if mark is None:
        return Syntax(None, None, f"malformed YAML: {problem}")
    last = max(1, len(lines) - (1 if text.endswith("\n") else 0))
    if mark.line + 1 > last and error.context_mark is not None:
        mark = error.context_mark  # the file ended inside it: where it began
    line, column = mark.line + 1, mark.column + 1
    if line > last:  # past the end: the last line, no column to name
        return Syntax(last, None, f"malformed YAML: {problem}", _hint(error, lines))
    return Syntax(
        line, column, f"malformed YAML at column {column}: {problem}", _hint(error, lines)
    )


def _hint(error: MarkedYAMLError, lines: list[str]) -> str | None:
    problem = error.problem or ""
    context = error.context or ""
    mark = error.problem_mark
    here = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    column = mark.column if mark is not None else 0
    if _tab(error, lines):
        return TAB_HINT
    if "quoted scalar" in context:
        return _quote_hint(error, lines, problem)
    if mark is None:
        return None
    if problem == "mapping values are not allowed in this context":
        return _colon_hint(lines, mark.line, column)
    if problem == "did not find expected key":
        return _key_hint(here, column)
    if problem == "did not find expected '-' indicator":
        return (
            "this key sits at the indentation of a list's items: start it with '- ' to make it "
            "an item, or indent it like the key that holds the list"
        )
    if problem.startswith("did not find expected ','") and error.context_mark is not None:
        opened = error.context_mark
        bracket = "]" if "sequence" in context else "}"
        return (
            f"the {'[' if bracket == ']' else '{'} at line {opened.line + 1} column "
            f"{opened.column + 1} needs ',' between its items and a closing {bracket}"
        )
    return None


def _tab(error: MarkedYAMLError, lines: list[str]) -> bool:
    """Whether the parser stopped at a tab (`cannot start any token`, `violates indentation`)."""
    mark = error.problem_mark
    if "tab character" in (error.problem or ""):
        return True
    if mark is None or mark.line >= len(lines):
        return False
    line: str = lines[mark.line]
    column: int = mark.column
    return line[column : column + 1] == "\t"


def _quote_hint(error: MarkedYAMLError, lines: list[str], problem: str) -> str | None:
    if "escape character" in problem:
        return "a \\ in double quotes starts an escape: write \\\\, or quote the value with '"
    opened = error.context_mark
    if "end of stream" not in problem or opened is None or opened.line >= len(lines):
        return None
    quote = lines[opened.line][opened.column : opened.column + 1]
    return (
        f"the {quote} that opens this value is never closed: {QUOTES[quote]}"
        if quote in QUOTES
        else None
    )


def _colon_hint(lines: list[str], index: int, column: int) -> str:
    """`mapping values are not allowed`: a ': ' where YAML reads a value, not a key."""
    here = lines[index]
    start = len(here) - len(here.lstrip(" "))
    if ": " in here[start:column] or here[start:column].rstrip().endswith(":"):
        return "quote the value: it holds ': ', which YAML reads as a new key"
    above = next((i for i in range(index - 1, -1, -1) if _content(lines[i])), None)
    if above is None:
        return "quote the value: it holds ': ', which YAML reads as a new key"
    indent = len(lines[above]) - len(lines[above].lstrip(" "))
    if start > indent:
        return (
            f"this line is indented deeper than line {above + 1}, so YAML reads it as part of "
            "that value: indent it like the keys beside it"
        )
    if not KEY.search(lines[above]):
        return (
            f"line {above + 1} has no ': ' after its key, so YAML reads this line as more of "
            "it: a key needs a space after its colon"
        )
    return "indent this line like the keys beside it, or quote a value that holds ': '"


def _key_hint(here: str, column: int) -> str | None:
    """`did not find expected key`: a key indented between two levels, or text after a
    closing quote."""
    if not here[:column].strip():
        return "indent this key exactly like the other keys of its mapping"
    if here[:column].rstrip().endswith(('"', "'")):
        return "text follows the closing quote: put the whole value inside the quotes"
    return None


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")
