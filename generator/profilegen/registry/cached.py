"""The loaded registry, reused while no byte of registry/ (or of profilegen) has changed,
wherever the tree is (another checkout or worktree of the same registry reuses it)."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cache import Inputs, Store, code_digest
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
    if key is None:
        # Something in registry/ is not a plain file (the loader reports it): no cache at all.
        return load_registry(root)
    # The loaded registries this process keeps are handed out as copies of their own.
    store = Store("registry", keep=8)
    hit = _stored(store, key)
    if hit is not None:
        return _copy(*hit, root)
    parsed = Store("documents")
    known = _parsed_documents(parsed) if parsed.folder not in _READ_PARSED else {}
    _READ_PARSED.add(parsed.folder)
    if known is not None:
        PARSED.update(known)
    before = len(PARSED)
    result = load_registry(root)
    _store(store, key, *result)
    if len(PARSED) != before or known is None:
        parsed.put_object("parsed", (code_digest(), _recent(result[0])))
    return _copy(*result, root)


# A registry is stored without its engines' facts (most of its bytes, and the same for most
# registries loaded: an edit seldom touches them); they are stored once per set of facts
# texts, named by their digests, and put back as the registry is read.
_FACTS_KEPT: set[tuple[Path, str]] = set()


def _stored(store: Store, key: str) -> tuple[Registry, FindingSink] | None:
    hit = store.get_object(key)
    if not (
        isinstance(hit, tuple)
        and len(hit) == 3
        and isinstance(hit[0], Registry)
        and isinstance(hit[1], FindingSink)
        and isinstance(hit[2], str)
    ):
        return None
    facts = Store("facts", keep=4).get_object(hit[2])
    if not isinstance(facts, dict):
        return None
    registry = copy.copy(hit[0])
    registry.facts = facts
    return registry, hit[1]


def _store(store: Store, key: str, registry: Registry, sink: FindingSink) -> None:
    named = "".join(f"{engine}={d}\n" for engine, d in sorted(registry.facts_digests.items()))
    facts_key = hashlib.sha256(named.encode()).hexdigest()
    facts = Store("facts", keep=4)
    if (facts.folder, facts_key) not in _FACTS_KEPT:
        if not (facts.folder / facts_key).is_file():
            facts.put_object(facts_key, dict(registry.facts))
        _FACTS_KEPT.add((facts.folder, facts_key))
    shell = copy.copy(registry)
    shell.facts, shell._derived = {}, {}
    store.put_object(key, (shell, sink, facts_key))


def _parsed_documents(store: Store) -> dict[str, bytes] | None:
    """The parsed texts the store holds, if this code parsed them (another version of the
    reader may have read the same text otherwise)."""
    held = store.get_object("parsed")
    if not (isinstance(held, tuple) and len(held) == 2 and held[0] == code_digest()):
        return None
    if not isinstance(held[1], dict):
        return None
    return {k: v for k, v in held[1].items() if isinstance(k, str) and isinstance(v, bytes)}


# The stores of parsed documents this process has read (it keeps what it read).
_READ_PARSED: set[Path] = set()


# What a caller may add to or take from: every table, and the sets and maps beside them.
_CONTAINERS: tuple[str, ...] = ("gpus", "rigs", "engines", "models", "drafters", "patches")
_CONTAINERS += ("profiles", "gateways", "facts", "facts_digests", "abstract_profiles")
_CONTAINERS += ("sources", "broken")


def _copy(registry: Registry, sink: FindingSink, root: Path) -> tuple[Registry, FindingSink]:
    """A registry of the caller's own, as loading these bytes from `root` makes it: its
    tables and documents are new containers (a caller may move or add to them), the frozen
    entities in them are shared. A tree with a key holds regular files only, all inside it,
    so its findings and sources name files relative to the root; only the root and each
    document's path move."""
    mine = copy.copy(registry)
    mine.root = root
    mine.documents = [(k, replace(doc, path=root / doc.display)) for k, doc in registry.documents]
    for name in _CONTAINERS:
        setattr(mine, name, copy.copy(getattr(registry, name)))
    mine._derived = {}
    return mine, sink.copy()


def _recent(registry: Registry) -> dict[str, Any]:
    """The parsed documents of the registry just loaded (older texts are dropped)."""
    return {d.digest: PARSED[d.digest] for _, d in registry.documents if d.digest in PARSED}


def open_registry_cached(root: Path) -> Registry:
    """The registry, or RegistryError with every problem (as `open_registry`)."""
    registry, sink = load_registry_cached(root)
    sink.raise_if_errors()
    return registry
