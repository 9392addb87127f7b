"""Evidence a user can trust: every measured speed is physically possible on its rig, a
record says where and when it was measured, and its source holds no credentials."""

from __future__ import annotations

import datetime
import re
import urllib.parse
from collections.abc import Iterator

from ...errors import Finding
from ...fit.speed import MARGIN, impossible_figures
from .base import CheckContext, rule

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+")
_SECRET_KEYS = re.compile(
    r"(?i)^(api[_-]?key|key|token|access[_-]?token|auth|password|passwd|secret|sig|signature)$"
)


@rule(
    "evidence-bound",
    f"a measured speed is within the physical bound of its rig (memory bandwidth for decode, "
    f"tensor throughput for prefill, x{MARGIN:g}: docs/EVIDENCE.md)",
)
def bounds(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        for i, ev in enumerate(p.evidence):
            if ev.rig not in reg.rigs:
                continue  # an unknown rig is the reference rule's
            for past in impossible_figures(reg, p, ev, ctx.usable_lock):
                yield ctx.report(
                    ctx.at(p.id, "evidence", i, *past.node),
                    f"{ev.key or f'evidence #{i + 1}'}: {past.message()}",
                    hint="a figure past the bound was not measured on this rig at these "
                    "settings: correct the rig, the settings (spec_n, tp) or the figure",
                )


def credentials(url: str) -> list[str]:
    """What in a URL is a secret: its user and password, a query value named like a key."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    found = ["user information"] if "@" in parts.netloc else []
    for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if _SECRET_KEYS.match(name):
            found.append(f"the query's {name}=")
    return found


@rule("evidence-source", "an evidence record's source names no credentials (user:password@, ?key=)")
def sources(ctx: CheckContext) -> Iterator[Finding]:
    for p in ctx.registry.concrete_profiles():
        for i, ev in enumerate(p.evidence):
            secrets = [s for url in _URL.findall(ev.source) for s in credentials(url)]
            if secrets:
                yield ctx.report(
                    ctx.at(p.id, "evidence", i, "source"),
                    f"{ev.key or f'evidence #{i + 1}'}: the source holds a URL with "
                    f"{' and '.join(dict.fromkeys(secrets))}: a credential must not be "
                    "published",
                    hint="remove it from the URL (and change the password or key: it was "
                    "committed)",
                )


@rule(
    "evidence-record",
    "an evidence record says where its figures were read, and when (not later than today)",
)
def records(ctx: CheckContext) -> Iterator[Finding]:
    today = datetime.date.today()
    for p in ctx.registry.concrete_profiles():
        for i, ev in enumerate(p.evidence):
            name = ev.key or f"evidence #{i + 1}"
            if not ev.source.strip():
                yield ctx.report(
                    ctx.at(p.id, "evidence", i, "source"),
                    f"{name}: the source is empty: a record names where its figures were read",
                    hint="the benchmark page and line, the log file, or the bench command",
                )
            if datetime.date.fromisoformat(ev.date) > today + datetime.timedelta(days=1):
                yield ctx.report(
                    ctx.at(p.id, "evidence", i, "date"),
                    f"{name}: dated {ev.date}, after today ({today.isoformat()}): a record is "
                    "of a run that happened",
                )
