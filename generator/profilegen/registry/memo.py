"""Registry entities this process has already validated, by the text they were read from.

A check, a render and the tests load many registries that differ in a file or two; a file
whose text was validated before is not validated again, and an entity (or a resolved profile)
made from the same texts is the same object. Entities are frozen models, so sharing them is
safe. Only successes are kept: an invalid file is validated, and reported, every time.
"""

from __future__ import annotations

from typing import Any

from ..cache import InMemory

# Bounds, for a long-lived process that loads many registries (a test session): each memo
# forgets everything past its bound, so a few catalogues' worth is kept.
# (kind, text digest) of files their kind's file model accepted.
VALID: InMemory[tuple[str, str], bool] = InMemory(20_000)
# (kind, text digest) -> the entity built from that file.
ENTITIES: InMemory[tuple[str, str], Any] = InMemory(5_000)
# (display, text digest) of each file of an extends chain, root first -> (the resolved
# profile, the location of each of its nodes).
PROFILES: InMemory[tuple[tuple[str, str], ...], tuple[Any, dict[Any, Any]]] = InMemory(2_000)
# Digest of a facts file's bytes -> its EngineFacts (a few hundred KiB each).
FACTS: InMemory[str, Any] = InMemory(32)
