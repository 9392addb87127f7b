"""Registry loading: read YAML with locations, validate, resolve `extends`, check references.

Owns: the loaded `Registry`, where every value came from, and profile lookup by name.
May import: `errors`, `model`.
"""

from __future__ import annotations

from .loader import KINDS, file_model, find_root, load_registry, open_registry
from .lookup import find_profile
from .source import Registry, Source

__all__ = [
    "KINDS",
    "Registry",
    "Source",
    "file_model",
    "find_profile",
    "find_root",
    "load_registry",
    "open_registry",
]
