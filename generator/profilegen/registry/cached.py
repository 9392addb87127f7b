"""The loaded registry, reused while no byte of registry/ (or of profilegen) has changed,
wherever the tree is (another checkout or worktree of the same registry reuses it)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..cache import Inputs, Store
from ..errors import FindingSink
from .load import PARSED
from .loader import load_registry
from .source import Registry


def registry_inputs(root: Path) -> Inputs:
    return Inputs(root, ("registry",), ("registry",))


def load_registry_cached(root: Path) -> tuple[Registry, FindingSink]:
    """What `load_registry` returns, from the cache when the registry is unchanged."""
    inputs = registry_inputs(root)
    key = inputs.key()
    store = Store("registry")
    hit = store.get_object(key)
    if (
        isinstance(hit, tuple)
        and len(hit) == 2
        and isinstance(hit[0], Registry)
        and isinstance(hit[1], FindingSink)
    ):
        return _moved(hit[0], root), hit[1]
    if key is None:
        # Something in registry/ is not a plain file (the loader reports it): no cache at all.
        return load_registry(root)
    parsed = Store("documents")
    known = parsed.get_object("parsed")
    if isinstance(known, dict):
        PARSED.update({k: v for k, v in known.items() if isinstance(v, bytes)})
    before = len(PARSED)
    result = load_registry(root)
    store.put_object(key, result)
    if len(PARSED) != before or not isinstance(known, dict):
        parsed.put_object("parsed", _recent(root))
    return result


def _moved(registry: Registry, root: Path) -> Registry:
    """A registry loaded from the same bytes elsewhere, as loading it from `root` makes it.
    A tree with a key holds regular files only, all inside it, so its findings and sources
    name files relative to the root; only the root and each document's path move."""
    registry.root = root
    for _, doc in registry.documents:
        doc.path = root / doc.display
    return registry


def _recent(root: Path) -> dict[str, Any]:
    """The parsed documents of the registry just loaded (older texts are dropped)."""
    keep = {}
    for path in sorted((root / "registry").rglob("*.yaml")):
        try:
            digest = hashlib.sha256(
                path.read_bytes().decode("utf-8").removeprefix("\ufeff").encode()
            ).hexdigest()
        except (OSError, UnicodeDecodeError):
            continue
        if digest in PARSED:
            keep[digest] = PARSED[digest]
    return keep


def open_registry_cached(root: Path) -> Registry:
    """The registry, or RegistryError with every problem (as `open_registry`)."""
    registry, sink = load_registry_cached(root)
    sink.raise_if_errors()
    return registry
