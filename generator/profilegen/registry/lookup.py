"""Finding a profile by the names people use for it: id, upstream key or unique prefix."""

from __future__ import annotations

from ..errors import UsageError, suggest
from ..model import Profile
from .source import Registry


def find_profile(registry: Registry, name: str) -> Profile:
    """A profile by id, upstream key (`vllm/…`) or unique id prefix."""
    profiles = registry.profiles
    if name in profiles:
        return profiles[name]
    by_key = [p for p in profiles.values() if p.upstream_key == name]
    if by_key:
        return by_key[0]
    matches = sorted(i for i in profiles if i.startswith(name))
    if len(matches) == 1:
        return profiles[matches[0]]
    if matches:
        shown = ", ".join(matches[:8]) + (" …" if len(matches) > 8 else "")
        raise UsageError(f"profile {name!r} is ambiguous: {shown}")
    close = suggest(name, list(profiles))
    hint = f" (did you mean {close!r}?)" if close else " (see `profilegen list`)"
    raise UsageError(f"no profile {name!r}{hint}")
