"""`profilegen init`: a registry that `profilegen check` passes, built and checked in a
scratch folder, then written into its folder all at once, never over a file already there."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import Severity, UsageError, printable
from ..generated.schemas import build_schemas
from ..lockfile.lock import LOCK_NAME, Lock
from ..write import write_files
from .packaged import adoption_files, packaged, release
from .shapes import Shape, gpu_document, parse_shape, rig_document

# Kind folders a first profile needs; git keeps an empty folder only with a file in it.
KEPT_EMPTY = ("engines", "models", "profiles")


@dataclass(frozen=True)
class InitOptions:
    folder: Path
    rig: str


def run_init(opts: InitOptions) -> list[str]:
    """Writes the new registry into `opts.folder`; returns the files written, relative to it."""
    shape = parse_shape(opts.rig)
    folder = opts.folder
    _refuse_registry(folder)
    files = registry_files(shape, release())
    _refuse_overwrite(folder, files)
    write_files({folder / rel: content for rel, content in files.items()}, root=folder)
    return sorted(files)


def registry_files(shape: Shape, version: str) -> dict[str, bytes]:
    """Every file of the new registry, by path relative to its folder, proven to pass
    `profilegen check` in a scratch copy."""
    with tempfile.TemporaryDirectory(prefix="profilegen-init-") as scratch:
        root = Path(scratch)
        files = _sources(shape)
        files.update({f"schema/{name}": text for name, text in build_schemas().items()})
        files[LOCK_NAME] = Lock().to_bytes()
        _put(root, files)
        generated = _generated(root)
        _put(root, generated)
        _prove(root)
    files.update(generated)
    files.update(adoption_files(version))
    return files


def _sources(shape: Shape) -> dict[str, bytes]:
    """registry/: the settings, the rig's GPU, the rig, and the empty kind folders."""
    files = {
        "registry/settings.yaml": packaged("settings.yaml"),
        f"registry/gpus/{shape.gpu}.yaml": gpu_document(shape),
        f"registry/rigs/{shape.ident}.yaml": rig_document(shape),
    }
    files.update({f"registry/{kind}/.gitkeep": b"" for kind in KEPT_EMPTY})
    return files


def _put(root: Path, files: dict[str, bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def _generated(root: Path) -> dict[str, bytes]:
    """What `render --all` writes for the new registry (docs/: no profile has compose/ yet)."""
    from ..generated.tree import plan_all
    from ..registry import load_registry

    registry, sink = load_registry(root)
    if sink.errors:
        raise RuntimeError(f"the new registry does not load: {sink.findings[0].render()}")
    return plan_all(registry)


def _prove(root: Path) -> None:
    """`profilegen check` on the scratch copy: anything it refuses is a bug here."""
    from ..check.driver import CheckOptions, collect

    errors = [f for f in collect(CheckOptions(str(root))) if f.severity is Severity.ERROR]
    if errors:
        raise RuntimeError(f"the new registry fails its check: {errors[0].render()}")


def shown(folder: Path) -> str:
    """The folder as messages name it."""
    return "the current folder" if folder == Path() else printable(str(folder))


def _refuse_registry(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{shown(folder)} is not a folder")
    registry = folder / "registry"
    if registry.exists() or registry.is_symlink():
        raise UsageError(
            f"{shown(folder)} already holds a registry (registry/): `profilegen init` starts a "
            "new one and changes nothing there (run `profilegen check` in it instead)"
        )


def _refuse_overwrite(folder: Path, files: dict[str, bytes]) -> None:
    """Every file init would write must be new, and nothing may stand where its folders go."""
    taken = []
    for rel in sorted(files):
        path = folder / rel
        if path.exists() or path.is_symlink():
            taken.append(rel)
            continue
        for parent in path.relative_to(folder).parents:
            if parent.parts and _blocks(folder / parent):
                taken.append(parent.as_posix())
    if taken:
        listed = ", ".join(dict.fromkeys(taken))
        raise UsageError(
            f"`profilegen init` would overwrite what is in {shown(folder)}: {listed} "
            "(move it aside, or init another folder); nothing was written"
        )


def _blocks(path: Path) -> bool:
    """A file, or a link, where init needs a folder."""
    return path.is_symlink() or (path.exists() and not path.is_dir())
