"""`profilegen verify`: the model files on the rig against the lock, before the engine starts.

No request leaves the machine: this is `fetch`'s verification (every locked file present
with its size and sha256, hashed once and remembered in MODEL_DIR's verified-files record)
plus the shards a split GGUF's name promises, so a missing or truncated file shows in
seconds instead of as a crash minutes into the engine's start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lockfile.artifacts import promised_shards
from ..lockfile.lock import LOCK_NAME
from ..lockfile.pins import pin_label
from ..registry import Registry, find_profile
from .fetch import Need, _declared, needs, verify_local
from .fetched import Fetched, held_problems
from .verify import Record, human


@dataclass(frozen=True)
class VerifyOptions:
    profile: str
    model_dir: Path
    fmt: str = "text"
    strict: bool = False  # anything less than hash-verified fails


# What a check proved of an artifact, strongest first.
HASHED, SIZE_ONLY, MISSING, WRONG = "hash-verified", "size-only", "missing", "wrong"


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
        small = sum(f.sha256 is None for f in need.locked)
        how = f"size and sha256 from {LOCK_NAME}" + (
            f" ({small} small file(s) by size: the Hub keeps no sha256 for them)" if small else ""
        )
        size = sum(f.size or 0 for f in need.locked)
    else:
        missing = [need.target / p for p in need.artifact.files if not (need.target / p).is_file()]
        if not need.artifact.files and not (need.target.is_dir() and any(need.target.iterdir())):
            missing = [need.target]
        problems = [f"{p}: missing" for p in missing] or _declared(need)
        how = f"declared size only: {need.lock_note}"
        size = need.artifact.size_bytes or 0
    problems += _shard_problems(need)
    # Files the lock has no sha256 for: held to what `fetch` downloaded (hub/fetched.py).
    fetched = Fetched(record.model_dir)
    problems += held_problems(need.key, need.target, need.unlocked, fetched, record)
    obj = {
        "proof": _proof(need, problems),
        "role": need.role,
        "key": need.key,
        "repo": need.artifact.repo,
        "revision": need.revision,
        "pinned": need.pin.pinned,
        "pin": pin_label(need.artifact, need.pin),
        "target": str(need.target),
        "files": list(need.files),
        "bytes": size,
        "verified_by": how,
        "problems": problems,
    }
    return obj, problems


def _proof(need: Need, problems: list[str]) -> str:
    if problems:
        return (
            MISSING
            if all(p.endswith(": missing") or ": missing (" in p for p in problems)
            else WRONG
        )
    # A resolved lock entry has the sha256 of every file the Hub stores by hash (the weights);
    # small files kept in git (config.json) have no sha256 there and are matched by size.
    hashed = need.locked is not None and any(f.sha256 for f in need.locked)
    return HASHED if hashed else SIZE_ONLY


def verify_files(registry: Registry, opts: VerifyOptions) -> tuple[list[dict[str, Any]], Record]:
    """Each artifact the profile mounts, checked: what was proved and what is wrong."""
    profile = find_profile(registry, opts.profile)
    record = Record(opts.model_dir)
    objects = []
    try:
        for need in needs(registry, profile, opts.model_dir):
            objects.append(check_need(need, record)[0])
    finally:
        record.save()
    return objects, record


def proved(objects: list[dict[str, Any]]) -> dict[str, int]:
    return {
        level: sum(o["proof"] == level for o in objects)
        for level in (HASHED, SIZE_ONLY, MISSING, WRONG)
    }


def failed(objects: list[dict[str, Any]], strict: bool) -> bool:
    counts = proved(objects)
    return bool(counts[MISSING] or counts[WRONG] or (strict and counts[SIZE_ONLY]))


def report_lines(objects: list[dict[str, Any]]) -> list[str]:
    lines = []
    for obj in objects:
        count = f"{len(obj['files'])} files" if obj["files"] else "whole repository"
        lines.append(
            f"{obj['role']}: {obj['repo']} -> {obj['target']}: {count}, {human(obj['bytes'])}, "
            f"{obj['verified_by']}: {obj['proof']}"
        )
        if not obj["pinned"]:
            lines.append(f"  {obj['pin']}")
        lines += [f"  {problem}" for problem in obj["problems"]]
    return lines


def verdict(ident: str, objects: list[dict[str, Any]], record: Record, opts: VerifyOptions) -> str:
    """One line saying exactly what was proved."""
    counts = proved(objects)
    hashed = f"{record.hashed} file(s) hashed, the rest known from {opts.model_dir / '.profilegen-verified.json'}"
    tally = ", ".join(f"{n} {level}" for level, n in counts.items() if n)
    problems = sum(len(o["problems"]) for o in objects)
    if problems:
        return (
            f"{ident}: {problems} problem(s) with the files in {opts.model_dir} ({tally}; {hashed}); "
            f"the engine would not load them: `profilegen fetch {ident} --model-dir "
            f"{opts.model_dir}` downloads what is missing or wrong"
        )
    if counts[SIZE_ONLY]:
        strict = "; --strict fails on this" if not opts.strict else "; failed (--strict)"
        return (
            f"{ident}: every file is in place; {tally}: {counts[SIZE_ONLY]} artifact(s) checked by "
            f"size only, as {LOCK_NAME} has no sha256 for them (`profilegen lock` online pins "
            f"them){strict} ({hashed})"
        )
    return f"{ident}: every file is in place and hash-verified ({hashed})"
