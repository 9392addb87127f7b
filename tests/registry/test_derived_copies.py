"""A registry's derived values are worked out once, and a copy of it starts afresh."""

from __future__ import annotations

import dataclasses

from tests.support.repo import shared_registry


def test_a_copy_does_not_read_the_originals_derived_values() -> None:
    registry = shared_registry()
    assert registry.derived("test-count", lambda r: len(r.profiles)) == len(registry.profiles)
    copy = dataclasses.replace(registry, profiles={})
    assert copy.derived("test-count", lambda r: len(r.profiles)) == 0
    # The original keeps its own.
    assert registry.derived("test-count", lambda r: -1) == len(registry.profiles)
