"""Results this process has worked out or read, kept in memory for the rest of the run.

For values that are immutable and keyed by what they were made from (a compose file's bytes,
a run's key): a check asks for them once per scenario. Past `limit` entries everything is
forgotten at once, so a long-lived process stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class InMemory(Generic[K, V]):
    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._items: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        if len(self._items) >= self._limit:
            self._items.clear()
        self._items[key] = value


class ByIdentity(Generic[V]):
    """Values worked out from objects that never change (frozen models), by those very
    objects: the registry loader hands out the same object for the same text, so a check of a
    changed registry works out again only what the change reaches. The objects are kept with
    their value, so the id of one no longer alive is never taken for another's."""

    def __init__(self, limit: int) -> None:
        self._memo: InMemory[tuple[object, ...], tuple[tuple[object, ...], V]] = InMemory(limit)

    def get(
        self, objects: tuple[object, ...], make: Callable[[], V], also: tuple[object, ...] = ()
    ) -> V:
        """The value made from `objects` (and the hashable values `also`), made on first use."""
        key = (*map(id, objects), also)
        hit = self._memo.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], objects, strict=True)):
            return hit[1]
        value = make()
        self._memo.put(key, (objects, value))
        return value
