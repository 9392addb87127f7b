"""Registry loading: read YAML with locations, validate, resolve `extends`, check references.

Owns: the loaded `Registry`, where every value came from, and profile lookup by name.
May import: `errors`, `model`, `cache`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .root import find_root

if TYPE_CHECKING:
    from .cached import load_registry_cached, open_registry_cached
    from .loader import KINDS, file_model, load_registry, open_registry
    from .lookup import find_profile
    from .source import Registry, Source

# Loaded on first use, so that `find_root` (and a cached answer) costs no data model import.
_LAZY = {
    "load_registry_cached": "cached",
    "open_registry_cached": "cached",
    "KINDS": "loader",
    "file_model": "loader",
    "load_registry": "loader",
    "open_registry": "loader",
    "find_profile": "lookup",
    "Registry": "source",
    "Source": "source",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)


__all__ = [
    "KINDS",
    "Registry",
    "Source",
    "file_model",
    "find_profile",
    "find_root",
    "load_registry",
    "load_registry_cached",
    "open_registry",
    "open_registry_cached",
]
