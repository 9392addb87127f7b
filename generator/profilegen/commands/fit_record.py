"""`fit log FILE --record`: one boot log is one record, on the rig it ran on."""

from __future__ import annotations

import hashlib
from pathlib import Path

import click

from ..authoring.evidence import record_evidence, recorded_as
from ..fit.fromlog import LogFit, evidence_record
from ..fit.logrig import log_rig
from ..registry import Registry


def log_digest(text: str) -> str:
    """What identifies a log: its content, whatever the file is called."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def record_log(registry: Registry, path: Path, text: str, fit: LogFit, rig: str | None) -> None:
    """Appends the boot to its profile's evidence, unless this log is already recorded."""
    digest = log_digest(text)
    seen = recorded_as(registry, f"sha256 {digest})")
    if seen is not None:
        click.echo(
            f"this log is already recorded as {seen[1]} in {seen[0]}: nothing changed", err=True
        )
        return
    where = log_rig(registry, fit.log, registry.profiles[fit.profile], rig)
    record = evidence_record(fit, path, where, digest=digest)
    rel = record_evidence(registry, fit.profile, record)
    click.echo(f"recorded the boot as evidence in {rel} (rig {where})", err=True)
