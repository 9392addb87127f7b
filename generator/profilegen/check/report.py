"""Formats findings for people (text), programs (json) and GitHub Actions annotations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import groupby

import click

from ..errors import Finding, Severity


def _escape_gh(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def format_findings(findings: Sequence[Finding], fmt: str, *, color: bool = False) -> str:
    ordered = sorted(findings, key=Finding.sort_key)
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
                }
                for f in ordered
            ],
            indent=2,
        )
    if fmt == "github":
        lines = []
        for f in ordered:
            level = "error" if f.severity is Severity.ERROR else "warning"
            props = f"file={_escape_gh(f.location.file, prop=True)}"
            if f.location.line:
                props += f",line={f.location.line}"
            props += f",title={_escape_gh(f.rule, prop=True)}"
            hint = f" ({f.hint})" if f.hint else ""
            lines.append(f"::{level} {props}::{_escape_gh(f.message + hint)}")
        return "\n".join(lines)
    return _text(ordered, color)


def _text(ordered: Sequence[Finding], color: bool) -> str:
    lines: list[str] = []
    for file, group in groupby(ordered, key=lambda f: f.location.file):
        items = list(group)
        if len(ordered) > 1 and len({f.location.file for f in ordered}) > 1:
            lines.append(click.style(file, bold=True) if color else file)
        for f in items:
            text = f.render()
            if color:
                fg = "red" if f.severity is Severity.ERROR else "yellow"
                text = text.replace(f"[{f.rule}]", click.style(f"[{f.rule}]", fg=fg), 1)
            lines.append(("  " if len({x.location.file for x in ordered}) > 1 else "") + text)
    return "\n".join(lines)


def summary(findings: Sequence[Finding]) -> str:
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    warnings = len(findings) - errors
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
