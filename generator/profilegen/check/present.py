"""What `check` shows people: every error, and warnings a reader can act on.

A warning kind that repeats is one line (its first finding, with the count); `--verbose` lists
every one. With `--changed`, the findings in what the change touched come first and in full,
and the warnings elsewhere are one line. GitHub shows only a few annotations of a kind per
step, so there too the change's findings come first and repeated kinds are one annotation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import Finding, Location, Severity
from .changed import Change
from .report import format_findings

# A warning kind repeated this often is shown as one line.
GROUP_AT = 3


@dataclass
class Arranged:
    full: list[Finding] = field(default_factory=list)  # shown one a line, in this order
    grouped: list[tuple[Finding, int]] = field(default_factory=list)  # (first, count) per kind
    elsewhere: list[Finding] = field(default_factory=list)  # warnings outside the change

    @property
    def folded(self) -> int:
        return sum(n for _first, n in self.grouped) + len(self.elsewhere)


def _sorted(findings: Sequence[Finding], change: Change | None) -> list[Finding]:
    """Errors first; within each, the change's findings first; then by file and line."""
    return sorted(
        findings,
        key=lambda f: (
            f.severity is not Severity.ERROR,
            change is not None and not change.covers(f),
            f.sort_key(),
        ),
    )


def arrange(findings: Sequence[Finding], *, verbose: bool, change: Change | None) -> Arranged:
    out = Arranged()
    ordered = _sorted(findings, change)
    warnings: list[Finding] = []
    for f in ordered:
        if f.severity is Severity.ERROR or verbose:
            out.full.append(f)
        elif change is not None and not change.covers(f):
            out.elsewhere.append(f)
        else:
            warnings.append(f)
    counts = Counter(kind(f) for f in warnings)
    seen: set[tuple[str, ...]] = set()
    for f in warnings:
        if counts[kind(f)] < GROUP_AT:
            out.full.append(f)
        elif kind(f) not in seen:
            seen.add(kind(f))
            out.grouped.append((f, counts[kind(f)]))
    return out


def kind(f: Finding) -> tuple[str, ...]:
    """A warning's kind: its rule and the last plain words of its message (the names and
    figures at its start vary between findings of one kind; how it ends says what it is)."""
    plain = [
        w for w in (x.strip("(),.:;") for x in f.message.split()) if re.fullmatch(r"[a-z]+", w)
    ]
    return (f.rule, *plain[-3:])


def _group_finding(first: Finding, count: int) -> Finding:
    """The kind's first finding, saying how many more there are and where the rest are."""
    return Finding(
        first.location,
        f"{first.message}{first.inherited} (and {count - 1} more like it: "
        "`profilegen check --verbose` lists them)",
        first.hint,
        first.rule,
        first.severity,
        first.path,
    )


def _elsewhere_line(found: list[Finding], change: Change) -> Finding:
    kinds = Counter(f.rule for f in found)
    listed = ", ".join(
        f"{rule} {n}" for rule, n in sorted(kinds.items(), key=lambda t: (-t[1], t[0]))
    )
    return Finding(
        Location("registry"),
        f"{len(found)} warning(s) outside the change since {change.base} ({listed}): "
        "`profilegen check --verbose` lists them",
        None,
        "elsewhere",
        Severity.WARNING,
    )


def render(arranged: Arranged, fmt: str, change: Change | None, *, color: bool) -> str:
    """The findings as text or GitHub annotations, in the arranged order."""
    shown = list(arranged.full) + [_group_finding(f, n) for f, n in arranged.grouped]
    if arranged.elsewhere and change is not None:
        shown.append(_elsewhere_line(arranged.elsewhere, change))
    return format_findings(shown, fmt, color=color, ordered=True)
