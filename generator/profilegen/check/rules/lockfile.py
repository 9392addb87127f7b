"""The lock file records every Hub artifact and remote patch file, and agrees with the registry."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Location, Severity
from ...hub.artifacts import artifact_uses
from ...hub.lock import LOCK_NAME, entry_matches, patch_entries, read_lock
from .base import CheckContext, rule


@rule("lock", "every Hub artifact and remote patch file is recorded in the lock file and agrees")
def lock(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    locked = read_lock(ctx.root)
    if locked is None:
        yield ctx.finding(
            "lock", Location(LOCK_NAME), "lock file is missing", hint="run `profilegen lock`"
        )
        return
    for use in artifact_uses(reg):
        entry = locked.artifacts.get(use.key)
        if entry is None:
            yield ctx.finding(
                "lock",
                use.location,
                f"artifact {use.key} ({use.artifact.repo}) is not in {LOCK_NAME}",
                hint="run `profilegen lock`",
            )
        elif not entry_matches(use, entry):
            yield ctx.finding(
                "lock",
                use.location,
                f"artifact {use.key} changed since {LOCK_NAME} was written",
                hint="run `profilegen lock`",
            )
        elif not entry.get("resolved"):
            yield ctx.finding(
                "lock",
                use.location,
                f"artifact {use.key} is locked from declared facts only, not verified on the Hub",
                hint="run `profilegen lock` with network access to record commit, files and sha256",
                severity=Severity.WARNING,
            )
        elif use.artifact.pinned and entry.get("commit") != use.artifact.revision:
            yield ctx.finding(
                "lock",
                use.location,
                f"artifact {use.key} is pinned to {use.artifact.revision}, the lock has {entry.get('commit')}",
                hint="run `profilegen lock`",
            )
    pins = patch_entries(reg)
    for key, pin in sorted(pins.items()):
        patch_id, path = key.split("/", 1)
        files = [f.path for f in reg.patches[patch_id].source.files]
        where = reg.where("patches", patch_id, ("source", "files", files.index(path)))
        got = locked.patches.get(key)
        if got is None:
            yield ctx.finding(
                "lock",
                where,
                f"remote patch file {key} is not in {LOCK_NAME}",
                hint="run `profilegen lock`",
            )
        elif got != pin:
            yield ctx.finding(
                "lock",
                where,
                f"remote patch file {key} does not agree with {LOCK_NAME}",
                hint="a pin changed: verify the new file, then run `profilegen lock`",
            )
    for key in sorted(set(locked.patches) - set(pins)):
        yield ctx.finding(
            "lock",
            Location(LOCK_NAME),
            f"{key} is locked but no patch pins it",
            hint="run `profilegen lock`",
            severity=Severity.WARNING,
        )
