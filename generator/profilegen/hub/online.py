"""`check --online` and `lock`: verify artifacts on the Hub and record what they resolve to."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import click

from ..errors import Finding, NetworkError, ProfilegenError, Severity, UsageError
from ..lockfile.artifacts import ArtifactUse, artifact_uses
from ..lockfile.lock import (
    LOCK_NAME,
    Lock,
    declared_entry,
    entry_matches,
    read_lock,
    resolved_entry,
)
from ..registry import Registry
from ..write import write_atomic
from .client import offline, verify_artifacts
from .deadline import MAX_SECONDS, Deadline
from .patchpins import verified_pins
from .types import ADVISORY_CODES, NETWORK_CODES, ArtifactResult, HubError, HubSettings


def _progress(total: int) -> tuple[object, object]:
    """A progress bar on a terminal, silence elsewhere (CI logs stay readable)."""
    if not sys.stderr.isatty():
        return None, None
    bar = click.progressbar(length=total, label="Hub", file=sys.stderr)
    bar.__enter__()
    return bar, lambda _result: bar.update(1)


def hub_settings() -> HubSettings:
    """Timeouts and retries, tunable for slow links (PROFILEGEN_HUB_TIMEOUT, _RETRIES, _WORKERS),
    each a finite number within bounds (a request's timeout at most a day)."""

    def number(name: str, default: float, low: float, high: float, whole: bool) -> float:
        raw = os.environ.get(name, "").strip()
        if not raw:
            return default
        try:
            value = int(raw) if whole else float(raw)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:  # NaN fails the comparison
            kind = "a whole number" if whole else "a number"
            raise UsageError(f"{name} must be {kind} from {low:g} to {high:g}, got {raw!r}")
        return value

    return HubSettings(
        timeout=number("PROFILEGEN_HUB_TIMEOUT", 10.0, 0.001, MAX_SECONDS, False),
        retries=int(number("PROFILEGEN_HUB_RETRIES", 4, 0, 100, True)),
        workers=int(number("PROFILEGEN_HUB_WORKERS", 16, 1, 256, True)),
    )


def verify_uses(uses: list[ArtifactUse], deadline: Deadline) -> list[ArtifactResult]:
    """Every artifact checked on the Hub within one deadline; exit 2 if it cannot be asked."""
    if offline():
        # Asking for the Hub while forbidding it: a contradiction on the command line (exit 2).
        raise UsageError(
            "HF_HUB_OFFLINE is set: the Hub cannot be asked (drop --online, or unset it)"
        )
    bar, progress = _progress(len(uses))
    try:
        requests = [u.request() for u in uses]
        results = verify_artifacts(requests, hub_settings(), progress, deadline)  # type: ignore[arg-type]
    except HubError as exc:
        raise ProfilegenError(str(exc)) from exc
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)  # type: ignore[attr-defined]
    unreachable = [p.message for r in results for p in r.problems if p.code in NETWORK_CODES]
    if unreachable:
        shown = unreachable[:5] + ([f"… and {len(unreachable) - 5} more"] * (len(unreachable) > 5))
        raise NetworkError(
            f"the Hub could not be reached for {len(unreachable)} of {len(uses)} artifacts "
            "(nothing was checked or written):\n" + "\n".join(f"  {m}" for m in shown)
        )
    return results


def online_findings(registry: Registry, deadline: Deadline) -> list[Finding]:
    uses = artifact_uses(registry)
    findings = []
    for use, result in zip(uses, verify_uses(uses, deadline), strict=True):
        for problem in result.problems:
            # An unpinned revision is a fact to flag; a size that drifted from the declared
            # one means the registry (or the repo) is wrong, so CI fails on it.
            severity = Severity.WARNING if problem.code == "revision-unpinned" else Severity.ERROR
            findings.append(
                Finding(use.location, problem.message, None, f"hub-{problem.code}", severity)
            )
    return findings


@dataclass(frozen=True)
class Locked:
    """What `lock` wrote: how many artifacts (resolved on the Hub) and remote patch files."""

    artifacts: int
    resolved: int
    patch_files: int
    offline: bool
    # Remote patch files the cache lacked offline: kept as the lock had them, not verified now.
    patch_kept: tuple[str, ...] = ()


def run_lock(registry: Registry, *, offline_only: bool, timeout: float | None = None) -> Locked:
    """Rewrites the lock file; resolves on the Hub unless offline (then keeps what is known)."""
    uses = artifact_uses(registry)
    previous = read_lock(registry.root) or Lock()
    problems: list[str] = []
    stay_offline = offline_only or offline()
    pins = verified_pins(registry, previous, stay_offline, Deadline.start(timeout))
    lock = Lock(patches=pins.entries)
    if stay_offline:
        for use in uses:
            old = previous.artifacts.get(use.key)
            keep = old is not None and old.get("resolved") and entry_matches(use, old)
            lock.artifacts[use.key] = old if keep else declared_entry(use)  # type: ignore[assignment]
    else:
        results = verify_uses(uses, Deadline.start(timeout))
        for use, result in zip(uses, results, strict=True):
            hard = [p for p in result.problems if p.code not in ADVISORY_CODES]
            if hard or result.commit is None:
                problems.extend(p.message for p in hard)
                continue
            lock.artifacts[use.key] = resolved_entry(use, result)
            for p in result.problems:
                click.echo(f"warning: {p.message}", err=True)
    if problems:
        raise ProfilegenError("lock not written:\n" + "\n".join(f"  {m}" for m in problems))
    write_atomic(registry.root / LOCK_NAME, lock.to_bytes(), root=registry.root)
    resolved = sum(1 for e in lock.artifacts.values() if e.get("resolved"))
    kept = tuple(pins.kept)
    return Locked(len(lock.artifacts), resolved, len(lock.patches), stay_offline, kept)
