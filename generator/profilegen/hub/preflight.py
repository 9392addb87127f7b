"""`profilegen verify`: the model files on the rig against the lock, before the engine starts.

No request leaves the machine: this is `fetch`'s verification (every locked file present
with its size and sha256, hashed once and remembered in MODEL_DIR's verified-files record)
plus the shards a split GGUF's name promises, so a missing or truncated file shows in
seconds instead of as a crash minutes into the engine's start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..registry import Registry, find_profile
from .artifacts import promised_shards
from .fetch import Need, _declared, needs, verify_local
from .lock import LOCK_NAME
from .verify import Record, human


@dataclass(frozen=True)
class VerifyOptions:
    profile: str
    model_dir: Path
    fmt: str = "text"


def _shard_problems(need: Need) -> list[str]:
    problems = []
    for name in promised_shards(need.files):
        path = need.target / name
        state = "present but not in the lock, so unverified" if path.is_file() else "missing"
        problems.append(
            f"{path}: {state} ({need.key} lists {Path(need.files[0]).name}, which is one of a "
            f"split set; list every shard in the artifact's files and run `profilegen lock`)"
        )
    return problems


def check_need(need: Need, record: Record) -> tuple[dict[str, Any], list[str]]:
    """One artifact's files on disk: what was checked and what is wrong."""
    if need.locked is not None:
        problems = verify_local(need, record)
        how = f"size and sha256 from {LOCK_NAME}"
        size = sum(f.size or 0 for f in need.locked)
    else:
        missing = [need.target / p for p in need.artifact.files if not (need.target / p).is_file()]
        if not need.artifact.files and not (need.target.is_dir() and any(need.target.iterdir())):
            missing = [need.target]
        problems = [f"{p}: missing" for p in missing] or _declared(need)
        how = f"declared size only: {need.lock_note}"
        size = need.artifact.size_bytes or 0
    problems += _shard_problems(need)
    obj = {
        "role": need.role,
        "key": need.key,
        "repo": need.artifact.repo,
        "revision": need.revision,
        "target": str(need.target),
        "files": list(need.files),
        "bytes": size,
        "verified_by": how,
        "problems": problems,
    }
    return obj, problems


def run_verify(registry: Registry, opts: VerifyOptions) -> int:
    """0 when every file the profile mounts is there and sound; 1 otherwise."""
    profile = find_profile(registry, opts.profile)
    record = Record(opts.model_dir)
    objects, problems = [], []
    try:
        for need in needs(registry, profile, opts.model_dir):
            obj, found = check_need(need, record)
            objects.append(obj)
            problems += found
    finally:
        record.save()
    if opts.fmt == "json":
        click.echo(
            json.dumps({"profile": profile.id, "ok": not problems, "artifacts": objects}, indent=2)
        )
        return EXIT_FINDINGS if problems else EXIT_OK
    for obj in objects:
        state = "ok" if not obj["problems"] else f"{len(obj['problems'])} problem(s)"
        count = f"{len(obj['files'])} files" if obj["files"] else "whole repository"
        click.echo(
            f"{obj['role']}: {obj['repo']} -> {obj['target']}: {count}, {human(obj['bytes'])}, "
            f"{obj['verified_by']}: {state}"
        )
        for problem in obj["problems"]:
            click.echo(f"  {problem}")
    hashed = f"{record.hashed} file(s) hashed, the rest known from {opts.model_dir / '.profilegen-verified.json'}"
    if problems:
        click.echo(
            f"{profile.id}: {len(problems)} problem(s) with the files in {opts.model_dir} ({hashed}); "
            f"the engine would not load them: `profilegen fetch {profile.id} --model-dir "
            f"{opts.model_dir}` downloads what is missing or wrong"
        )
        return EXIT_FINDINGS
    click.echo(f"{profile.id}: every file is in place and verified ({hashed})")
    return EXIT_OK
