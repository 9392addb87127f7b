"""Where a bundle may be written (`render -o`, `gateway -o`), and writing it as one unit.

Never inside the registry (also through a symlink), never at or through a symlink below the
repository's root when named inside it, never the current folder by an empty name; a folder
holding another profile's bundle, or files that are no bundle, only with `--force`. The new
bundle replaces the generated entries of the old one as a whole (so no patch folder or file of
an earlier render survives), and leaves alone what is not generated: the user's `.env`, and
`models/` where MODEL_DIR defaults to it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..registry.files import NotRegular, read_regular
from ..registry.safejson import load_json
from ..write import ASIDE_PREFIX, NO_LINKS, STAGE_PREFIX, link_on, link_reason, write_folder

# Every entry a bundle of any target holds: what a new bundle replaces of an old one.
BUNDLE_ENTRIES = (
    "compose.yaml",
    "entrypoint.sh",
    "helpers.sh",
    "kubernetes.yaml",
    "patches.yaml",
    "config.yaml",
    ".env.example",
    "patches.manifest.json",
    "patches",
)
# Entries a folder may hold and still count as empty: the user's settings.
USER_ENTRIES = frozenset({".env"})
_READ_LIMIT = 4 * 2**20
_LABELS = (
    (
        "profile",
        "compose.yaml",
        re.compile(r"^\s*io\.profilegen\.profile: ([a-z0-9._-]+)\s*$", re.M),
    ),
    (
        "gateway",
        "compose.yaml",
        re.compile(r"^\s*io\.profilegen\.gateway: ([a-z0-9._-]+)\s*$", re.M),
    ),
    (
        "profile",
        "kubernetes.yaml",
        re.compile(r"^\s*profilegen\.io/profile: ([a-z0-9._-]+)\s*$", re.M),
    ),
)


@dataclass(frozen=True)
class Owner:
    """Whose bundle a folder holds: a profile's or a gateway's."""

    kind: str
    ident: str

    def __str__(self) -> str:
        return f"{self.kind} {self.ident}"


def _text(path: Path) -> str | None:
    try:
        data, _size = read_regular(path, _READ_LIMIT)
    except (OSError, NotRegular):
        return None
    return data[:_READ_LIMIT].decode("utf-8", errors="replace")


def owner_of(folder: Path) -> Owner | None:
    """The owner of the bundle in `folder` (its manifest, else its labels), or None."""
    manifest = _text(folder / "patches.manifest.json")
    if manifest is not None:
        try:
            ident = load_json(manifest).get("profile")
        except (ValueError, AttributeError):
            ident = None
        if isinstance(ident, str):
            return Owner("profile", ident)
    for kind, name, label in _LABELS:
        text = _text(folder / name)
        found = label.search(text) if text is not None else None
        if found:
            return Owner(kind, found.group(1))
    return None


def _entries(folder: Path) -> list[str]:
    skip = (STAGE_PREFIX, ASIDE_PREFIX)
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(skip))


def check_output(root: Path, out: Path, owner: Owner, *, force: bool) -> list[str]:
    """Refuses a folder the bundle may not go to (UsageError); returns the entries of an old
    bundle the new one replaces."""
    if not str(out).strip():
        raise UsageError("-o needs a folder (an empty name would mean the current folder)")
    registry = (root / "registry").resolve()
    target = out.resolve()
    if target == registry or target.is_relative_to(registry):
        raise UsageError(
            f"{out} is inside the registry ({registry}): a bundle is written outside it "
            "(choose another -o)"
        )
    _refuse_link(root, out)
    if not out.exists():
        return []
    if not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder")
    try:
        present = [e for e in _entries(out) if e not in USER_ENTRIES]
    except OSError as exc:
        raise UsageError(f"cannot read {out}: {exc.strerror or exc}") from None
    if not present:
        return []
    found = owner_of(out)
    if found == owner:
        return list(BUNDLE_ENTRIES)
    if not force:
        if found is None:
            raise UsageError(
                f"{out} is not empty and holds no profilegen bundle: choose an empty or new "
                "folder, or pass --force to add the bundle to it (entries of the same names "
                "are replaced, nothing else is touched)"
            )
        raise UsageError(
            f"{out} holds the bundle of {found}: choose another folder, or pass --force to "
            f"replace it with the bundle of {owner} (your .env and other files stay)"
        )
    return list(BUNDLE_ENTRIES) if found is not None else []


def _refuse_link(root: Path, out: Path) -> None:
    """A folder named inside the repository is written as its own files are: never at or
    through a symlink below its root (a committed link may point anywhere), also one that a
    `..` after it seems to step back out of (`compose/link/../x` is the parent of the link's
    target to the system, not compose/x)."""
    written = Path(os.path.normpath(out.absolute()))
    link = _link_before_dotdot(root, out.absolute())
    if link is None and written.is_relative_to(root):
        link = link_on(root, written)
    if link is not None:
        rel = link.relative_to(root).as_posix()
        raise UsageError(f"{out}: {rel} {link_reason(root, link)}: {NO_LINKS} (choose another -o)")


def _link_before_dotdot(root: Path, path: Path) -> Path | None:
    """A symlink below `root` that `path`, as written, passes through before a `..`."""
    if ".." not in path.parts:
        return None
    current = Path(path.anchor)
    for part in path.parts[1:]:
        current = current / part
        here = Path(os.path.normpath(current))
        if part != ".." and here != root and here.is_relative_to(root) and current.is_symlink():
            return here
    return None


def write_output(
    root: Path, out: Path, owner: Owner, files: Mapping[str, bytes], *, force: bool = False
) -> None:
    """The bundle written to `out` as one unit (installers executable), once `check_output`
    allows it; a folder that cannot be written is a usage error."""
    stale = check_output(root, out, owner, force=force)
    try:
        write_folder(out, files, stale=stale, executable=lambda name: name.endswith(".sh"))
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
