"""The lock file records every Hub artifact and remote patch file, and agrees with the registry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import Finding, Location, Severity
from ...lockfile.artifacts import ArtifactUse, artifact_uses
from ...lockfile.lock import (
    LOCK_NAME,
    Lock,
    LockError,
    bad_names,
    entry_matches,
    line_of,
    patch_entries,
    resolved_problems,
)
from ...lockfile.paths import shown
from .base import CheckContext, rule


def _unresolved(ctx: CheckContext, use: ArtifactUse) -> Finding:
    users = ", ".join(use.used_by[:3]) + (
        f" and {len(use.used_by) - 3} more" if len(use.used_by) > 3 else ""
    )
    return ctx.report(
        use.location,
        f"artifact {use.key} (used by {users}) is locked from declared facts only: no commit, "
        "file sizes or sha256 to verify a download against",
        hint="run `profilegen lock` with network access; until then `fetch` can check only "
        "the declared size",
        severity=Severity.WARNING,
    )


@rule("lock", "every Hub artifact and remote patch file is recorded in the lock file and agrees")
def lock(ctx: CheckContext) -> Iterator[Finding]:
    locked = ctx.lock
    if isinstance(locked, LockError):
        yield ctx.report(Location(LOCK_NAME), str(locked).removeprefix(f"{LOCK_NAME}: "))
        return
    if locked is None:
        yield ctx.report(Location(LOCK_NAME), "lock file is missing", hint="run `profilegen lock`")
        return
    for use in artifact_uses(ctx.registry):
        entry = locked.artifacts.get(use.key)
        escaping = bad_names(entry) if entry is not None and entry.get("resolved") else []
        if escaping:
            yield from _escaping(ctx, locked, use.key, escaping)
        else:
            yield from _artifact(ctx, use, entry)
    yield from _patches(ctx, locked)


def _artifact(
    ctx: CheckContext, use: ArtifactUse, entry: dict[str, Any] | None
) -> Iterator[Finding]:
    """An artifact's entry: present, current, resolved (or said not to be) and sound."""
    if entry is None:
        yield ctx.report(
            use.location,
            f"artifact {use.key} ({use.artifact.repo}) is not in {LOCK_NAME}",
            hint="run `profilegen lock`",
        )
    elif not entry_matches(use, entry):
        yield ctx.report(
            use.location,
            f"artifact {use.key} changed since {LOCK_NAME} was written",
            hint="run `profilegen lock`",
        )
    elif not entry.get("resolved"):
        profiles = ctx.registry.profiles
        if any(u in profiles and profiles[u].status != "retired" for u in use.used_by):
            yield _unresolved(ctx, use)  # artifacts of retired profiles only: not fetched
    elif problems := resolved_problems(use, entry):
        yield ctx.report(
            use.location,
            f"{LOCK_NAME} entry of artifact {use.key} {problems[0]}: it cannot vouch for the files",
            hint="run `profilegen lock` with network access to record it again",
        )
    elif use.artifact.pinned and entry.get("commit") != use.artifact.revision:
        yield ctx.report(
            use.location,
            f"artifact {use.key} is pinned to {use.artifact.revision}, the lock has {entry.get('commit')}",
            hint="run `profilegen lock`",
        )


def _escaping(
    ctx: CheckContext, locked: Lock, key: str, names: list[tuple[object, str, int]]
) -> Iterator[Finding]:
    """Names of files a tampered lock entry records outside the model folder: at their line."""
    for name, problem, before in names:
        yield ctx.report(
            Location(LOCK_NAME, line_of(locked.text, key, name, before)),
            f"artifact {key} records the file name {shown(name)}, which {problem}: fetch and "
            "verify would not open it",
            hint="the lock is not what `profilegen lock` writes: run it again",
        )


def _patches(ctx: CheckContext, locked: Lock) -> Iterator[Finding]:
    reg = ctx.registry
    pins = patch_entries(reg)
    for key, pin in sorted(pins.items()):
        patch_id, path = key.split("/", 1)
        files = [f.path for f in reg.patches[patch_id].source.files]
        where = reg.where("patches", patch_id, ("source", "files", files.index(path)))
        got = locked.patches.get(key)
        if got is None:
            yield ctx.report(
                where,
                f"remote patch file {key} is not in {LOCK_NAME}",
                hint="run `profilegen lock`",
            )
        elif got != pin:
            yield ctx.report(
                where,
                f"remote patch file {key} does not agree with {LOCK_NAME}",
                hint="a pin changed: verify the new file, then run `profilegen lock`",
            )
    for key in sorted(set(locked.patches) - set(pins)):
        yield ctx.report(
            Location(LOCK_NAME),
            f"{key} is locked but no patch pins it",
            hint="run `profilegen lock`",
            severity=Severity.WARNING,
        )
