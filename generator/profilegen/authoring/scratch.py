"""The registry as it would load with one more file: proven in a scratch copy before the
real file is written, so a refused file never touches the repository."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ..errors import RegistryError
from ..registry import Registry, load_registry
from ..registry.files import copy_inside


@contextmanager
def registry_with(
    root: Path, rel: str, text: str, extra: Mapping[str, bytes] | None = None
) -> Iterator[Registry]:
    """root's registry with `text` at `rel` (and `extra` files beside registry/, such as a
    lock), loaded from a scratch copy that lives while the block runs; RegistryError with
    every finding if it does not load clean."""
    with tempfile.TemporaryDirectory(prefix="profilegen-scratch-") as scratch:
        copy = Path(scratch)
        copy_inside(root, root / "registry", copy / "registry")  # no link out is followed
        (copy / rel).write_text(text, encoding="utf-8")
        for name, data in (extra or {}).items():
            (copy / name).write_bytes(data)
        registry, sink = load_registry(copy)
        if sink.errors:
            raise RegistryError(sink.findings)
        yield registry


def load_with(root: Path, rel: str, text: str) -> Registry:
    """The registry as `registry_with` loads it, once the scratch copy is gone (its `root`
    still names the copy: set it to the real root before reading files through it)."""
    with registry_with(root, rel, text) as registry:
        return registry
