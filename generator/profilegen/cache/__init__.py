"""Results cached by the bytes of their inputs: an unchanged tree is never parsed twice.

Owns: fingerprints of input trees and of profilegen's own code, and the on-disk store of
results keyed by them, and a bounded in-memory memo of a run (atomic writes; every entry
signed under a key of this user's kept outside the cache, so foreign, corrupt or planted
entries are misses; only regular files read; off with `--no-cache` or PROFILEGEN_NO_CACHE=1).
May import: `errors`, `resources`, `write`.
"""

from __future__ import annotations

from .entry import CacheWriteError, read_file, read_sealed, write_file, write_sealed
from .fingerprint import Inputs, code_digest, tree_digest
from .memory import ByIdentity, InMemory
from .store import Store, configure, enabled

__all__ = [
    "ByIdentity",
    "CacheWriteError",
    "InMemory",
    "Inputs",
    "Store",
    "code_digest",
    "configure",
    "enabled",
    "read_file",
    "read_sealed",
    "tree_digest",
    "write_file",
    "write_sealed",
]
