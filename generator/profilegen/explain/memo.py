"""Sandbox runs reused while nothing they depend on has changed.

A run is a function of the compose file's bytes, the scenario, the GPU count, the engine
binary and the sandbox's own code; its record is kept under the result cache, so that
`check`, `explain` and the golden commands run each container once. The runs of a profile's
scenarios are one entry, read and written at once. A scenario that names a secret or a host
file (API_KEY, API_KEY_FILE, tokens) is never stored.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..cache import Store
from .sandbox import Run
from .secrets import SECRETS

# Bump when the sandbox or what is derived from a run changes, so old records are not reused.
VERSION = "3"
UNSTORED = SECRETS | {"API_KEY_FILE"}


@functools.cache
def sources_digest() -> bytes:
    """The explain package's own code: a record is only reused by the code that made it."""
    digest = hashlib.sha256(VERSION.encode())
    here = Path(__file__).parent
    for source in sorted([*here.glob("*.py"), *(here.parent / "sandbox").glob("*.py")]):
        digest.update(source.read_bytes())
    return digest.digest()


def run_key(
    files: Mapping[str, bytes],
    env: tuple[tuple[str, str], ...],
    gpus: int,
    nvlink: bool,
    binary: str,
) -> str | None:
    """The key of one sandbox run (the bundle's files and the scenario), or None when it must
    not be stored."""
    if any(name in UNSTORED for name, _ in env):
        return None
    digest = hashlib.sha256(_bundle_digest(tuple(sorted(files.items()))))
    digest.update(repr((env, gpus, nvlink, binary)).encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1024)
def _bundle_digest(files: tuple[tuple[str, bytes], ...]) -> bytes:
    """The sandbox's code and a bundle's files (hashed once for all of its scenarios)."""
    digest = hashlib.sha256(sources_digest())
    for name, data in files:
        digest.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.digest()


def recall(keys: Sequence[str]) -> list[Run] | None:
    """The stored runs of one group of launches (a profile's scenarios: one entry for them
    all), or None unless every one is there. A run is immutable: this process keeps the
    groups it has read or made, and reads each from the store once."""
    stored = _store().get_object(_group_key(keys))
    if not isinstance(stored, tuple) or len(stored) != len(keys):
        return None
    return list(stored) if all(isinstance(run, Run) for run in stored) else None


def remember(keys: Sequence[str], runs: Sequence[Run]) -> None:
    """Keeps a group's runs once all of them finished in time."""
    if not any(run.timed_out for run in runs):
        _store().put_object(_group_key(keys), tuple(runs))


def _group_key(keys: Sequence[str]) -> str | None:
    if not keys:
        return None
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()


def _store() -> Store:
    return Store("explain", keep=8192)
