"""`profilegen fetch`: download a profile's artifacts where its compose mounts them, then verify."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..errors import NetworkError, ProfilegenError
from ..lockfile.artifacts import SIZE_TOLERANCE, artifact_uses, profile_artifacts
from ..lockfile.lock import LOCK_NAME, bad_names, entry_matches, read_lock
from ..lockfile.paths import shown
from ..lockfile.pins import Pin, pin_label
from ..model import Profile
from ..model.model import Artifact
from ..registry import Registry, find_profile
from .client import offline
from .deadline import Deadline
from .download import fetch_artifact
from .fetched import FETCHED_NAME as FETCHED
from .fetched import Fetched, held_problems, hold_downloaded
from .types import NETWORK_CODES, ArtifactRequest, HubError, HubSettings
from .verify import Expected, Record, check_declared_size, check_files, human


@dataclass(frozen=True)
class FetchOptions:
    profile: str
    model_dir: Path
    dry_run: bool = False
    fmt: str = "text"
    timeout: float | None = None  # the deadline for talking to the Hub (and a stall's length)
    offline: bool = False  # --offline: verify what is there, download nothing


@dataclass(frozen=True)
class LockedFile:
    path: str
    size: int | None
    sha256: str | None


@dataclass(frozen=True)
class Need:
    """One artifact the profile mounts, where it goes, and what the lock knows of it."""

    role: str  # weights, drafter or mmproj
    key: str  # the lock file's key
    artifact: Artifact
    target: Path  # MODEL_DIR/<local_dir>: the engine reads <model_mount>/<local_dir>
    locked: tuple[LockedFile, ...] | None  # files of a resolved lock entry that still matches
    commit: str | None
    lock_note: str | None  # why the lock cannot vouch for these files

    @property
    def revision(self) -> str | None:
        # The locked commit pins what the sha256 values describe, even for a branch revision.
        return self.commit or self.artifact.revision

    @property
    def pin(self) -> Pin:
        """The commit fetch downloads (the registry's, or the lock's), or none: a branch."""
        if self.artifact.pinned:
            return Pin(self.artifact.revision, "registry")
        return Pin(self.commit, "lock") if self.commit else Pin(None, None)

    @property
    def unlocked(self) -> list[str]:
        """The files the lock has no sha256 for: `fetch` records theirs (hub/fetched.py)."""
        if self.locked is None:
            return list(self.files)
        return [f.path for f in self.locked if f.sha256 is None]

    @property
    def files(self) -> tuple[str, ...]:
        if self.locked is not None:
            return tuple(f.path for f in self.locked)
        return tuple(self.artifact.files)

    def request(self) -> ArtifactRequest:
        a = self.artifact
        return ArtifactRequest(self.key, a.repo, self.revision, self.files, a.size_bytes)


def needs(registry: Registry, profile: Profile, model_dir: Path) -> list[Need]:
    """Main weights, the drafter's own artifact, the projector: in that order."""
    wanted = profile_artifacts(registry, profile)
    lock = read_lock(registry.root)
    uses = {u.key: u for u in artifact_uses(registry)}
    out = []
    for role, key, artifact in wanted:
        entry = lock.artifacts.get(key) if lock is not None else None
        locked: tuple[LockedFile, ...] | None = None
        commit = None
        note = None
        if lock is None:
            note = f"no {LOCK_NAME}"
        elif entry is None or not entry_matches(uses[key], entry):
            note = f"{LOCK_NAME} has no current entry for {key} (run `profilegen lock`)"
        elif not entry.get("resolved"):
            note = f"{key} is locked from declared facts only (run `profilegen lock` online)"
        else:
            _refuse_escaping(key, entry)
            commit = entry.get("commit")
            locked = tuple(
                LockedFile(f["path"], f.get("size"), f.get("sha256"))
                for f in entry.get("files") or []
            )
        target = model_dir / artifact.local_dir
        out.append(Need(role, key, artifact, target, locked, commit, note))
    return out


def _refuse_escaping(key: str, entry: dict[str, Any]) -> None:
    """A lock entry naming a file outside the model folder is not used at all."""
    bad = bad_names(entry)
    if bad:
        name, problem, _before = bad[0]
        raise ProfilegenError(
            f"{LOCK_NAME}: artifact {key} records the file name {shown(name)}, which {problem}: "
            "nothing was opened (run `profilegen lock` again; `profilegen check` shows the line)"
        )


def _present(path: Path, size: int | None) -> bool:
    return path.is_file() and (size is None or path.stat().st_size == size)


def verify_local(need: Need, record: Record) -> list[str]:
    """Every locked file is there with the locked size and sha256; problems name the file."""
    expected = tuple(Expected(f.path, f.size, f.sha256) for f in need.locked or ())
    return check_files(need.target, expected, record)


def _declared(need: Need) -> list[str]:
    a = need.artifact
    if a.size is None:
        return [
            f"{need.target}: {need.key} declares no size and {LOCK_NAME} has no sha256 for it, "
            "so it cannot be verified; run `profilegen lock` online"
        ]
    return check_declared_size(need.key, need.target, tuple(a.files), a.size.bytes, SIZE_TOLERANCE)


# -- dry run ------------------------------------------------------------------------------------


def _plan_offline(need: Need) -> dict[str, Any]:
    """The plan from the registry and the lock alone: no request leaves the machine."""
    if need.locked is not None:
        files = [(f.path, f.size) for f in need.locked]
        source = "lock"
    else:
        files = [(p, None) for p in need.artifact.files]
        source = "registry"
    return _plan_object(
        need,
        need.revision,
        [(p, s, not _present(need.target / p, s)) for p, s in files],
        source,
    )


def _identity(need: Need, revision: str | None) -> dict[str, Any]:
    """The keys every plan and result object starts with."""
    return {
        "role": need.role,
        "key": need.key,
        "repo": need.artifact.repo,
        "revision": revision,
        "pinned": need.pin.pinned,
        "pin": pin_label(need.artifact, need.pin),
        "target": str(need.target),
        "local_dir": need.artifact.local_dir,
    }


def _plan_object(
    need: Need, revision: str | None, files: list[tuple[str, int | None, bool]], source: str
) -> dict[str, Any]:
    return {
        **_identity(need, revision),
        "source": source,
        "whole_repo": not files and not need.artifact.files,
        "files": [{"path": p, "size": s, "download": d} for p, s, d in files],
        "download_bytes": sum(s or 0 for _p, s, d in files if d),
        "declared_size_bytes": need.artifact.size_bytes,
        "lock": need.lock_note or "resolved",
    }


def _print_plan(obj: dict[str, Any]) -> None:
    rev = obj["revision"] or "main"
    click.echo(f"{obj['role']}: {obj['repo']} @ {rev} -> {obj['target']}  [from {obj['source']}]")
    click.echo(f"  {obj['pin']}")
    if obj["whole_repo"]:
        size = obj["declared_size_bytes"]
        about = f"about {human(size)} declared" if size is not None else "size not declared"
        click.echo(
            f"  whole repository, {about} "
            "(file list unknown without the Hub; `profilegen lock` online records it)"
        )
    for f in obj["files"]:
        state = "download" if f["download"] else "present"
        click.echo(f"  {f['path']}  {human(f['size'])}  {state}")
    if obj["files"]:
        todo = sum(1 for f in obj["files"] if f["download"])
        click.echo(
            f"  {todo} of {len(obj['files'])} files to download, {human(obj['download_bytes'])}"
        )


# -- fetch and verify ---------------------------------------------------------------------------


def _verify_offline(
    need: Need, record: Record, fetched: Fetched
) -> tuple[dict[str, Any], list[str]]:
    """Offline (--offline, HF_HUB_OFFLINE): nothing can be downloaded, so only check what is
    already there (files the lock has no sha256 for: against what fetch recorded)."""
    held = held_problems(need.key, need.target, need.unlocked, fetched, record)
    obj, problems = _verify_there(need, record)
    return obj, held + problems


def _verify_there(need: Need, record: Record) -> tuple[dict[str, Any], list[str]]:
    if need.locked is not None:
        problems = verify_local(need, record)
        missing = [p for p in problems if p.endswith(": missing")]
        if missing:
            problems.append(
                f"{need.key}: offline (--offline or HF_HUB_OFFLINE), so missing files cannot be "
                "downloaded"
            )
        return _result_object(need, need.revision, list(need.files), [], "sha256"), problems
    paths = [need.target / p for p in need.artifact.files]
    absent = [p for p in paths if not p.is_file()]
    if not need.artifact.files and not (need.target.is_dir() and any(need.target.iterdir())):
        absent = [need.target]
    problems = [f"{p}: missing (offline, so it cannot be downloaded)" for p in absent]
    # Without a resolved lock entry there is no sha256: the declared size is what is left.
    problems = problems or _declared(need)
    return _result_object(need, need.revision, list(need.files), [], "declared size"), problems


def _fetch_one(
    need: Need, progress: bool, deadline: Deadline, record: Record, fetched: Fetched
) -> tuple[dict[str, Any], list[str]]:
    sizes = {f.path: f.size for f in need.locked or ()}
    before = {p for p in need.files if _present(need.target / p, sizes.get(p))}
    try:
        result = fetch_artifact(
            need.request(), need.target, HubSettings(), progress=progress, deadline=deadline
        )
    except HubError as exc:
        if any(p.code in NETWORK_CODES for p in exc.problems):
            raise NetworkError(str(exc)) from exc
        raise ProfilegenError(str(exc)) from exc
    for problem in result.problems:
        click.echo(f"warning: {problem.message}", err=True)
    files = [f.path for f in result.files]
    downloaded = [p for p in files if p not in before]
    if need.locked is None:
        # No lock to vouch: hold the files to what the Hub says they are.
        click.echo(
            f"warning: {need.key}: not verified against the lock: {need.lock_note}", err=True
        )
        expected = tuple(Expected(f.path, f.size, f.sha256) for f in result.files)
        found = check_files(need.target, expected, record, source="the Hub")
        verified = "the Hub's sha256" if all(f.sha256 for f in expected) else "the Hub's sizes"
        found = found or _hold(need, result.revision, files, record, fetched)
        return _result_object(need, result.revision, files, downloaded, verified), found
    problems: list[str] = []
    if need.commit is not None and result.revision != need.commit:
        problems.append(f"{need.key}: fetched {result.revision}, {LOCK_NAME} has {need.commit}")
    locked = {f.path: f.sha256 for f in need.locked}
    for remote in result.files:
        if remote.sha256 and locked.get(remote.path) and remote.sha256 != locked[remote.path]:
            problems.append(
                f"{need.key}: the Hub's sha256 of {remote.path} differs from {LOCK_NAME}; "
                "the lock is stale or the repo was rewritten"
            )
    problems += verify_local(need, record)
    problems = problems or _hold(need, result.revision, need.unlocked, record, fetched)
    return _result_object(need, result.revision, files, downloaded, "sha256"), problems


def _hold(
    need: Need, commit: str | None, paths: list[str], record: Record, fetched: Fetched
) -> list[str]:
    """Files the lock has no sha256 for, held to what fetch recorded of them (and recorded)."""
    repo = need.artifact.repo
    return hold_downloaded(need.key, repo, commit, need.target, paths, fetched, record)


def _result_object(
    need: Need, revision: str | None, files: list[str], downloaded: list[str], verified: str
) -> dict[str, Any]:
    return {
        **_identity(need, revision),
        "files": files,
        "downloaded": downloaded,
        "verified": verified,
    }


def run_fetch(registry: Registry, opts: FetchOptions) -> int:
    profile = find_profile(registry, opts.profile)
    wanted = needs(registry, profile, opts.model_dir)
    is_offline = opts.offline or offline()
    objects: list[dict[str, Any]] = []
    problems: list[str] = []
    if opts.dry_run:
        # The plan comes from the lock and the disk: a dry run never touches the network.
        objects = [_plan_offline(need) for need in wanted]
    else:
        progress = opts.fmt == "text" and sys.stderr.isatty()
        deadline = Deadline.start(opts.timeout)
        record = Record(opts.model_dir)
        fetched = Fetched(opts.model_dir)
        try:
            for need in wanted:
                if is_offline:
                    obj, found = _verify_offline(need, record, fetched)
                else:
                    obj, found = _fetch_one(need, progress, deadline, record, fetched)
                objects.append(obj)
                problems += found
        finally:
            record.save()
            fetched.save()
    if problems:
        if opts.fmt == "json":
            click.echo(json.dumps(objects, indent=2))
        corrupt = any(LOCK_NAME in p for p in problems)
        raise ProfilegenError(
            f"{profile.id}: {len(problems)} problem{'s' * (len(problems) != 1)} with the files in "
            f"{opts.model_dir}:\n"
            + "\n".join(f"  {p}" for p in problems)
            + ("\n(delete the file named and run `profilegen fetch` again)" if corrupt else "")
        )
    _report(profile, opts, objects)
    return 0


def _report(profile: Profile, opts: FetchOptions, objects: list[dict[str, Any]]) -> None:
    if opts.fmt == "json":
        click.echo(json.dumps(objects, indent=2))
        return
    if opts.dry_run:
        click.echo(f"plan for {profile.id} into {opts.model_dir} (dry run: nothing is written)")
        for obj in objects:
            _print_plan(obj)
        return
    for obj in objects:
        got = len(obj["downloaded"])
        files = f"{len(obj['files'])} files" if obj["files"] else "whole repository"
        click.echo(
            f"{obj['role']}: {obj['repo']} @ {obj['revision'] or 'main'} -> {obj['target']}: "
            f"{files}, {got} downloaded, verified by {obj['verified']}"
        )
        if not obj["pinned"]:
            click.echo(f"  {obj['pin']}; the sha256 of what came is recorded in {FETCHED}")
    out = f"serve/{profile.id}"
    click.echo(
        f"serve it: profilegen render {profile.id} -o {out} && "
        f"MODEL_DIR={shlex.quote(str(opts.model_dir))} docker compose -f {out}/compose.yaml up"
    )
