"""BENCHMARKS.md read as data: its Markdown tables, row by row, with the line each came from."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A column's role, by the words its header starts with (lowercase, markup removed).
ROLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("compose", ("compose", "config", "variant")),
    ("rig", ("rig",)),
    ("kv", ("kv pool",)),
    ("kv_dtype", ("kv",)),
    ("quant", ("quant",)),
    ("ctx", ("max ctx", "bench ctx")),
    ("tps", ("narr / code tps",)),
    ("prefill", ("pp tok/s",)),
    ("vram", ("peak vram",)),
    ("date", ("date",)),
    ("notes", ("notes",)),
    ("verify_full", ("verify-full",)),
    ("verify_stress", ("verify-stress",)),
    ("soak", ("soak",)),
    ("acceptance", ("al",)),
)
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_SPLIT = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class TableRow:
    """One data row of a measurement table: its cells by role."""

    line: int
    heading: str  # the `## ` heading above it (a model, or a group of models)
    section: str  # the `### ` heading above it, if any
    cells: dict[str, str]


@dataclass(frozen=True)
class OtherTable:
    """A table of another shape (no compose and date columns): not evidence rows."""

    first: int
    last: int
    header: str
    rows: int


def cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in _SPLIT.split(inner)]


def _role(header: str) -> str | None:
    text = re.sub(r"[*_`]", "", header).strip().lower()
    for role, starts in ROLES:
        for start in starts:
            rest = text[len(start) :] if text.startswith(start) else None
            if rest is not None and not rest[:1].isalnum():
                return role
    return None


def _header(row: list[str]) -> bool:
    """Whether a line after a break reads as a header (data names a compose, a person, a date)."""
    return not any("`" in c or "@" in c or re.search(r"\d{4}-\d{2}-\d{2}", c) for c in row)


@dataclass
class _Table:
    header: list[str]
    first: int
    rows: list[tuple[int, list[str]]]
    last: int  # the table's last line so far (header, separator or row)


def _tables(lines: list[str]) -> list[tuple[str, str, _Table]]:
    """(heading, section, table) for each table; a table broken by a note continues the one
    before it where the next line is data with the same number of columns."""
    out: list[tuple[str, str, _Table]] = []
    heading = section = ""
    current: _Table | None = None
    for number, line in enumerate(lines, 1):
        if line.startswith("## "):
            heading, section, current = line[3:].strip(), "", None
        elif line.startswith("### "):
            section, current = line[4:].strip(), None
        if not line.startswith("|"):
            if line.strip() and not line.startswith(">"):
                current = None
            continue
        row = cells(line)
        if current is not None and current.last == number - 1:
            if not _SEPARATOR.match(line):
                current.rows.append((number, row))
            current.last = number
        elif current is not None and len(row) == len(current.header) and not _header(row):
            current.rows.append((number, row))
            current.last = number
        else:
            current = _Table(row, number, [], number)
            out.append((heading, section, current))
    return out


def read_tables(text: str) -> tuple[list[TableRow], list[OtherTable]]:
    """Rows of every table with a compose and a date column, and the other tables."""
    rows: list[TableRow] = []
    others: list[OtherTable] = []
    for heading, section, table in _tables(text.splitlines()):
        roles = [_role(h) for h in table.header]
        if "compose" not in roles or "date" not in roles or roles[0] != "compose":
            if table.rows:
                last = table.rows[-1][0]
                others.append(
                    OtherTable(table.first, last, " | ".join(table.header), len(table.rows))
                )
            continue
        for number, row in table.rows:
            by_role = {r: c for r, c in zip(roles, row, strict=False) if r is not None}
            rows.append(TableRow(number, heading, section, by_role))
    return rows, others
