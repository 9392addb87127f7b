"""Results this process has worked out or read, kept in memory for the rest of the run.

For values that are immutable and keyed by what they were made from (a compose file's bytes,
a run's key): a check asks for them once per scenario. Past `limit` entries everything is
forgotten at once, so a long-lived process stays bounded.
"""

from __future__ import annotations

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
