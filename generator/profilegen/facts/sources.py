"""An engine release's source tree, as much of it as a patch can touch, cached by content.

The release's wheel holds the package the image installs at the engine's `package_dir`. Its
text files (Python, templates, data) are kept under `sources/<artifact sha256>/`, the compiled
libraries left out: no patch edits them, and they are most of the wheel. The artifact is the
one the checked-in facts name (by sha256), so a tree, once there, is found without the network.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from ..model.facts import EngineFacts
from ..resources import cache_root
from .releases import ReleaseError, cached, download

# What a patch can touch: source and text files; shared libraries and binaries are left out.
TEXT_SUFFIXES = frozenset(
    {".py", ".pyi", ".jinja", ".json", ".yaml", ".yml", ".txt", ".toml", ".cfg", ".md", ".sh"}
)
MAX_MEMBER = 16 * 2**20


def tree(facts: EngineFacts, package: str, offline: bool = False) -> Path:
    """The cached source tree of `package` (`vllm`) from the release the facts were read from."""
    provenance = facts.provenance
    if provenance is None:
        raise ReleaseError(f"{facts.engine} has no release: {facts.none}")
    home = cache_root() / "sources" / provenance.sha256
    if (home / ".complete").is_file():
        return home / package
    artifact = cached(provenance.requirement) or download(provenance.requirement, offline=offline)
    if artifact.sha256 != provenance.sha256:
        raise ReleaseError(
            f"{provenance.requirement} is now {artifact.name} with sha256 {artifact.sha256}, "
            f"not the {provenance.sha256} its facts were read from; regenerate the facts"
        )
    shutil.rmtree(home, ignore_errors=True)
    staging = home.with_name(home.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    _extract(artifact.path, package, staging)
    staging.rename(home)
    (home / ".complete").write_text(artifact.name + "\n", encoding="utf-8")
    return home / package


def _extract(wheel: Path, package: str, into: Path) -> None:
    try:
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                name = info.filename
                if not name.startswith(package + "/") or info.is_dir():
                    continue
                if Path(name).suffix not in TEXT_SUFFIXES or info.file_size > MAX_MEMBER:
                    continue
                if ".." in Path(name).parts or name.startswith("/"):
                    continue  # never outside the tree
                target = into / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(info))
    except (OSError, zipfile.BadZipFile) as exc:
        raise ReleaseError(f"cannot read {wheel.name}: {exc}") from None
