"""`check --changed [REF]`: the files a change touched (git), and what they reach in the registry:
the profiles that extend a changed profile, and those that use a changed model, engine, drafter,
patch, rig or GPU, with their generated files."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import Finding, UsageError
from ..registry import Registry

GIT_TIMEOUT_S = 30
# Tried in order when --changed names no revision: the branch a pull request targets.
DEFAULT_BASES = ("origin/HEAD", "origin/main", "main", "HEAD")


@dataclass(frozen=True)
class Change:
    base: str
    files: frozenset[str]  # relative to the registry root, as findings name them
    profiles: frozenset[str]  # changed or reached through extends and references

    def covers(self, finding: Finding) -> bool:
        where = finding.location
        if where.file in self.files or set(where.inherited_by) & self.profiles:
            return True
        for top in ("registry/profiles/", "compose/"):
            if where.file.startswith(top):
                name = where.file[len(top) :].split("/", 1)[0].removesuffix(".yaml")
                return name in self.profiles
        return False


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def changed_files(root: Path, ref: str | None) -> tuple[str, frozenset[str]]:
    """(the base compared with, the files changed since it: committed, staged, unstaged and
    untracked), relative to `root`."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        raise UsageError(f"--changed needs a git checkout; {root} is not in one")
    bases = (ref,) if ref else DEFAULT_BASES
    base = next(
        (b for b in bases if _git(root, "rev-parse", "--verify", "--quiet", f"{b}^{{commit}}")),
        None,
    )
    if base is None:
        raise UsageError(f"--changed {ref}: no such revision in {root}")
    point = _git(root, "merge-base", base, "HEAD") or base
    names = set()
    for args in (
        ("diff", "--name-only", point.strip()),
        ("ls-files", "--others", "--exclude-standard"),
    ):
        out = _git(root, *args) or ""
        names |= {line for line in out.splitlines() if line}
    here = Path(top.strip()).resolve()
    inside = root.resolve()
    rel = set()
    for name in names:
        path = (here / name).resolve()
        if path.is_relative_to(inside):
            rel.add(path.relative_to(inside).as_posix())
    return base, frozenset(rel)


def reach(registry: Registry, files: frozenset[str]) -> frozenset[str]:
    """The profiles the changed files reach: their own file, an extended one, or an entity
    they name."""
    touched: dict[str, set[str]] = {}
    for path in files:
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "registry" and parts[2].endswith(".yaml"):
            touched.setdefault(parts[1], set()).add(parts[2].removesuffix(".yaml"))
        elif len(parts) >= 2 and parts[0] == "compose":
            touched.setdefault("profiles", set()).add(parts[1])
    reached = set(touched.get("profiles", set()))
    for p in registry.profiles.values():
        rig = registry.rigs.get(p.rig)
        names = {
            "models": {p.model},
            "engines": {p.engine},
            "drafters": {p.drafter.id} if p.drafter else set(),
            "patches": set(p.patches),
            "rigs": {p.rig},
            "gpus": set(rig.cards or [rig.gpu]) if rig else set(),
        }
        if any(names[kind] & touched.get(kind, set()) for kind in names):
            reached.add(p.id)
    grew = True
    while grew:  # what extends a reached profile is reached too
        more = {p.id for p in registry.profiles.values() if p.extends in reached} - reached
        reached |= more
        grew = bool(more)
    return frozenset(reached)


def change_of(registry: Registry, root: Path, ref: str | None) -> Change:
    base, files = changed_files(root, ref)
    return Change(base, files, reach(registry, files))
