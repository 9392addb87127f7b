"""A table that fits the terminal: columns are kept in the order of their worth until the next
would not fit, one flexible column (a title) takes the room left, cut with an ellipsis, and
`wide` keeps every column whole. Reasons too long for a cell go below the table as notes."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

GAP = 2
ELLIPSIS = "…"


@dataclass(frozen=True)
class Column:
    key: str
    head: str
    worth: int = 0  # 0: always shown; higher: left out sooner when the terminal is narrow
    flex: bool = False  # takes the room the others leave (at least `least`)
    least: int = 12


def terminal_width() -> int:
    """The terminal's width (COLUMNS first, as `shutil` reads it; 80 where there is none)."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def _natural(column: Column, cells: Sequence[dict[str, str]]) -> int:
    return (
        max(len(column.head), *(len(c[column.key]) for c in cells)) if cells else len(column.head)
    )


def layout(
    columns: Sequence[Column], cells: Sequence[dict[str, str]], width: int, wide: bool
) -> list[tuple[Column, int]]:
    """The columns shown and each one's width."""
    natural = {c.key: _natural(c, cells) for c in columns}
    if wide:
        return [(c, natural[c.key]) for c in columns]
    kept = list(columns)

    def used(cols: list[Column]) -> int:
        fixed = sum(natural[c.key] for c in cols if not c.flex)
        flex = sum(min(c.least, natural[c.key]) for c in cols if c.flex)
        return fixed + flex + GAP * (len(cols) - 1)

    while used(kept) > width:
        droppable = [c for c in kept if c.worth > 0]
        if not droppable:
            break
        kept.remove(max(droppable, key=lambda c: (c.worth, columns.index(c))))
    room = width - used([c for c in kept if not c.flex]) - GAP
    out = []
    for c in kept:
        if c.flex:
            if room < min(c.least, natural[c.key]):
                continue
            out.append((c, min(natural[c.key], room)))
        else:
            out.append((c, natural[c.key]))
    return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS


def render(
    columns: Sequence[Column], cells: Sequence[dict[str, str]], width: int, wide: bool
) -> list[str]:
    shown = layout(columns, cells, width, wide)
    lines = ["  ".join(c.head.ljust(w) for c, w in shown).rstrip()]
    for row in cells:
        lines.append("  ".join(_cut(row[c.key], w).ljust(w) for c, w in shown).rstrip())
    return lines


def notes(reasons: Sequence[str], width: int) -> list[str]:
    """`[1] reason`, wrapped to the width, the continuation indented under the reason."""
    out = []
    for i, reason in enumerate(reasons, 1):
        mark = f"[{i}] "
        out += textwrap.wrap(
            reason,
            max(20, width),
            initial_indent=mark,
            subsequent_indent=" " * len(mark),
            break_on_hyphens=False,
        )
    return out
