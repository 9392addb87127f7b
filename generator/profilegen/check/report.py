"""Formats findings for people (text), programs (json) and GitHub Actions annotations."""

from __future__ import annotations

import json
from collections.abc import Sequence

import click

from ..errors import Finding, Severity, printable


def _escape_gh(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _ordered(findings: Sequence[Finding]) -> list[Finding]:
    """Errors first, then warnings; each by file and line."""
    return sorted(findings, key=lambda f: (f.severity is not Severity.ERROR, f.sort_key()))


def format_findings(
    findings: Sequence[Finding], fmt: str, *, color: bool = False, ordered: bool = False
) -> str:
    """The findings in `fmt`; errors first unless they come `ordered` already."""
    ordered_findings = list(findings) if ordered else _ordered(findings)
    return _format(ordered_findings, fmt, color)


def _format(ordered: list[Finding], fmt: str, color: bool) -> str:
    if fmt == "json":
        return json.dumps(
            [
                {
                    "file": f.location.file,
                    "line": f.location.line,
                    "rule": f.rule,
                    "severity": f.severity.value,
                    "message": f.message,
                    "hint": f.hint,
                    "path": f.path or None,
                    "inherited_by": list(f.location.inherited_by),
                }
                for f in ordered
            ],
            indent=2,
        )
    if fmt == "github":
        lines = []
        for f in ordered:
            level = "error" if f.severity is Severity.ERROR else "warning"
            props = f"file={_escape_gh(printable(f.location.file), prop=True)}"
            if f.location.line:
                props += f",line={f.location.line}"
            props += f",title={_escape_gh(f.rule, prop=True)}"
            hint = f" ({f.hint})" if f.hint else ""
            text = printable(f.message + f.inherited + hint)
            lines.append(f"::{level} {props}::{_escape_gh(text)}")
        return "\n".join(lines)
    return "\n".join(_line(f, color) for f in ordered)


def _line(f: Finding, color: bool) -> str:
    """`file:line: error: [rule] message (hint)`: one finding, whole, on one line."""
    text = f.render()
    if color:
        label = f"{f.severity.value}:"
        fg = "red" if f.severity is Severity.ERROR else "yellow"
        text = text.replace(f" {label} ", f" {click.style(label, fg=fg, bold=True)} ", 1)
    return text


def summary(findings: Sequence[Finding], hidden: int = 0) -> str:
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    warnings = len(findings) - errors
    text = f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
    return text + (f" ({hidden} not shown: --quiet)" if hidden else "")
