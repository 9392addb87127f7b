"""Sandbox runs reused while nothing they depend on has changed.

A run is a function of the compose file's bytes, the scenario, the GPU count, the engine
binary and the sandbox's own code; its record is kept under the result cache, so that
`check`, `explain` and the golden commands run each container once. A scenario that names a
secret or a host file (API_KEY, API_KEY_FILE, tokens) is never stored.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path

from ..cache import Store
from .sandbox import Run
from .secrets import SECRETS

# Bump when the sandbox or what is derived from a run changes, so old records are not reused.
VERSION = "2"
UNSTORED = SECRETS | {"API_KEY_FILE"}


@functools.cache
def sources_digest() -> bytes:
    """The explain package's own code: a record is only reused by the code that made it."""
    digest = hashlib.sha256(VERSION.encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.digest()


def run_key(
    compose: bytes, env: tuple[tuple[str, str], ...], gpus: int, nvlink: bool, binary: str
) -> str | None:
    """The key of one sandbox run, or None when it must not be stored."""
    if any(name in UNSTORED for name, _ in env):
        return None
    digest = hashlib.sha256(sources_digest() + b"\0" + compose)
    digest.update(repr((env, gpus, nvlink, binary)).encode())
    return digest.hexdigest()


def remembered(key: str | None, run: Callable[[], Run]) -> Run:
    """The stored run for `key`, or `run()` (stored when it finished in time)."""
    store = Store("explain")
    hit = store.get_object(key)
    if isinstance(hit, Run):
        return hit
    result = run()
    if not result.timed_out:
        store.put_object(key, result)
    return result
