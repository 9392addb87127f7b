"""Patch entities from the folders (and single files) the upstream composes mount."""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from typing import Any

from ...errors import UsageError
from .compose import ComposeFile
from .source import Tree

RAW = "https://raw.githubusercontent.com/noonghunna/club-3090/{commit}/{folder}/"
PATCH_ROOT = "/etc/club3090/"
SKIPPED = ("README", ".gitkeep")


@dataclass(frozen=True)
class Mount:
    """A patch folder (or one file) from the upstream tree, where the container sees it."""

    repo_path: str  # folder (or file) in the upstream tree
    target: str  # container path
    is_file: bool

    @property
    def name(self) -> str:
        base = posixpath.basename(self.repo_path)
        if self.is_file:
            stem = base.rsplit(".", 1)[0].replace("_", "-").lower()
            if stem in ("chat-template", "template"):  # a generic file name: its folder says more
                return posixpath.basename(posixpath.dirname(self.repo_path))
            return stem
        return base


def patch_mounts(tree: Tree, compose: ComposeFile) -> list[Mount]:
    """Folders and files mounted from the upstream tree, except the NVLink helper.

    A patch folder the compose mounts must be files of the catalogue itself: one that is
    missing, a symbolic link or holds one cannot be carried over, and is refused at the
    compose line that mounts it (the container would start without the patch, or with
    whatever the link points to)."""
    folder = posixpath.dirname(compose.path)
    out = []
    for volume in compose.volumes:
        source = volume.source
        if "${" in source or not source.startswith("."):
            continue
        repo_path = posixpath.normpath(posixpath.join(folder, source))
        if repo_path.endswith("detect_nvlink.sh") or "/patches/" not in f"/{repo_path}/":
            continue
        linked = [p for p in [repo_path, *tree.under(repo_path)] if tree.is_link(p)]
        is_file = tree.is_file(repo_path) and not linked
        if linked or not (is_file or tree.under(repo_path)):
            raise UsageError(_unusable(tree, compose, source, repo_path, linked))
        out.append(Mount(repo_path, volume.target, is_file))
    return out


def _unusable(
    tree: Tree, compose: ComposeFile, source: str, repo_path: str, linked: list[str]
) -> str:
    text = tree.text(compose.path) or ""
    line = next((n for n, x in enumerate(text.splitlines(), 1) if source in x), None)
    where = f"{compose.path}:{line}" if line else compose.path
    at = tree.commit[:8] if tree.commit else "the work tree"
    if not linked:
        why = f"is missing at {at}"
    elif linked[0] == repo_path:
        why = f"is a symbolic link at {at}"
    else:
        why = f"holds a symbolic link ({linked[0]}) at {at}"
    return (
        f"{where}: the patch folder {repo_path} this compose mounts {why}: the import takes a "
        "patch only from files of the catalogue itself, and the server would start without it"
    )


def python_path_mounts(pythonpath: str | None) -> set[str]:
    """The patch mounts an upstream compose puts on PYTHONPATH (`/etc/club3090/x:`)."""
    return {
        entry.rstrip("/") for entry in (pythonpath or "").split(":") if entry.startswith(PATCH_ROOT)
    }


def patch_entity(
    tree: Tree,
    mount: Mount,
    ident: str,
    engine: str,
    install: tuple[str, bool] | None,
    w4a8: bool,
    python_path: bool = False,
) -> dict[str, Any]:
    """A remote patch pinned by the sha256 of every file, at the imported commit."""
    folder = posixpath.dirname(mount.repo_path) if mount.is_file else mount.repo_path
    paths = [mount.repo_path] if mount.is_file else tree.under(folder)
    files = []
    for path in paths:
        rel = posixpath.relpath(path, folder)
        if posixpath.basename(rel).startswith(SKIPPED):
            continue
        content = tree.read(path) or b""
        files.append(
            {"path": rel, "size": len(content), "sha256": hashlib.sha256(content).hexdigest()}
        )
    data: dict[str, Any] = {
        "id": ident,
        "title": f"{mount.name} (boot-time patch)",
        "engine": engine,
    }
    if mount.is_file:
        data["mount_file"] = mount.target
    elif mount.target.removeprefix(PATCH_ROOT) != ident:
        data["mount_dir"] = mount.target.removeprefix(PATCH_ROOT)
    data["source"] = {
        "kind": "remote",
        "base_url": RAW.format(commit=tree.commit or "HEAD", folder=folder),
        "files": files,
    }
    if install is not None:
        data["steps"] = [{"method": "script", "file": "install.sh", "interpreter": "bash"}]
        data["fail_closed"] = install[1]
    if python_path:
        data["python_path"] = True
    if w4a8:
        data["fail_closed"] = False
        data["activation"] = {
            "env": "W4A8",
            "default": True,
            "help": "1 runs W4 Marlin kernels with int8 activations; 0 keeps 16-bit activations",
            "exports": {"VLLM_MARLIN_INPUT_DTYPE": "int8"},
        }
    data["capability"] = f"what {mount.name} does at boot, as the catalogue ships it"
    data["drop_when"] = f"the pinned image includes it (see {folder}/README.md upstream)"
    return data
