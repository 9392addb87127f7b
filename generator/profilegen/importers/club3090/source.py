"""An upstream checkout read at one revision: a git directory (bare or not) or a plain folder."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UsageError

GIT_TIMEOUT_S = 60
LINK_MODE = "120000 "  # a symbolic link in `git ls-tree` (mode, type, object, tab, path)


@dataclass
class Tree:
    """Files of the catalogue at `rev` (None: the folder as it is on disk)."""

    root: Path
    rev: str | None
    commit: str | None = None
    _listing: list[str] | None = field(default=None, repr=False)
    _cache: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    _set: frozenset[str] | None = field(default=None, repr=False)
    _links: frozenset[str] = field(default=frozenset(), repr=False)

    @classmethod
    def open(cls, path: Path, rev: str | None) -> Tree:
        if not path.is_dir():
            raise UsageError(f"{path}: no such folder")
        if not _is_git(path):
            if rev is not None:
                raise UsageError(f"{path} is not a git repository: --rev needs one")
            return cls(path, None)
        wanted = rev or "HEAD"
        commit = _git(path, "rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}")
        if commit is None:
            raise UsageError(f"{wanted!r} is not a commit of {path}")
        return cls(path, wanted, commit.decode().strip())

    def files(self) -> list[str]:
        """Every file path at the revision, sorted (symbolic links included)."""
        if self._listing is None:
            if self.commit is None:
                self._listing = sorted(
                    p.relative_to(self.root).as_posix()
                    for p in self.root.rglob("*")
                    if p.is_file() and ".git" not in p.relative_to(self.root).parts
                )
            else:
                out = _git(self.root, "ls-tree", "-r", "-z", self.commit) or b""
                entries = [e.split("\t", 1) for e in out.decode().split("\0") if "\t" in e]
                self._listing = sorted(name for _, name in entries)
                self._links = frozenset(n for mode, n in entries if mode.startswith(LINK_MODE))
        return self._listing

    def is_link(self, path: str) -> bool:
        """Whether the path, or a folder it is in, is a symbolic link at the revision."""
        parts = path.strip("/").split("/")
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        if self.commit is None:
            return any((self.root / prefix).is_symlink() for prefix in prefixes)
        self.files()
        return any(prefix in self._links for prefix in prefixes)

    def is_file(self, path: str) -> bool:
        return path in self._file_set()

    def _file_set(self) -> frozenset[str]:
        if self._set is None:
            self._set = frozenset(self.files())
        return self._set

    def read(self, path: str) -> bytes | None:
        """The file's bytes at the revision, or None when it does not exist."""
        if path not in self._cache:
            if not self.is_file(path):
                self._cache[path] = None
            elif self.commit is None:
                target = (self.root / path).resolve()
                inside = target.is_relative_to(self.root.resolve())
                self._cache[path] = target.read_bytes() if inside and target.is_file() else None
            else:
                self._cache[path] = _git(self.root, "show", f"{self.commit}:{path}")
        return self._cache[path]

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def under(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return [f for f in self.files() if f.startswith(prefix)]


def _is_git(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def _git(path: Path, *args: str) -> bytes | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(path), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot run git in {path}: {exc}") from exc
    return proc.stdout if proc.returncode == 0 else None
