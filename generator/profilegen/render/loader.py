"""Templates read as registry files are: only regular files inside the repository, bounded.

A registry's own templates/ comes from pull requests like registry/: a template that is a
symlink out of the repository would copy whatever it points at (a key, a token) into every
rendered file, and a FIFO would block the render. Each template is checked before a byte of
it is read; a refused one is a located finding.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from jinja2 import Environment, FileSystemLoader
from jinja2.loaders import split_template_path

from ..errors import Finding, Location, RegistryError
from ..registry.files import MAX_VENDORED_FILE, Refused, read_inside


class InsideLoader(FileSystemLoader):
    """A FileSystemLoader whose templates are regular files inside the folder that holds their
    search path (the repository, for a registry's templates/)."""

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        for searchpath in self.searchpath:
            folder = Path(searchpath)
            path = folder.joinpath(*pieces)
            if path.exists() or path.is_symlink():
                return _source(folder, path)
        return super().get_source(environment, template)  # not found: Jinja's own error


def _source(folder: Path, path: Path) -> tuple[str, str, Callable[[], bool]]:
    rel = path.relative_to(folder.parent).as_posix()
    try:
        text = read_inside(folder.parent, path, MAX_VENDORED_FILE).decode("utf-8")
    except Refused as exc:
        raise RegistryError([Finding(Location(rel), f"{path.name} {exc}", rule="layout")]) from None
    except UnicodeDecodeError:
        problem = f"{path.name} is not UTF-8 text"
        raise RegistryError([Finding(Location(rel), problem, rule="layout")]) from None
    mtime = path.stat().st_mtime

    def uptodate() -> bool:
        try:
            return path.stat().st_mtime == mtime
        except OSError:
            return False

    return text, os.path.normpath(path), uptodate
