"""What maintainers curated in the registry, read before an import replaces its files.

Curated values are taken as each existing profile resolves (from its own file or the bases it
extends), so that a re-import which refactors the bases keeps them on the profile itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import ProfilegenError
from ...registry import open_registry

# Keys a maintainer curates in our registry; a re-import keeps them.
CURATED = {
    "profiles": ("title", "rig", "evidence", "caveats", "best_for", "siblings", "alternatives",
                 "notes", "template_note", "deviations", "kubernetes"),
    "patches": ("title", "capability", "drop_when", "upstream_ref", "effects", "requires",
                "foundational"),
    "models": ("name", "notes"),
}  # fmt: skip


def curated_profiles(root: Path) -> dict[str, dict[str, Any]]:
    """Each existing profile's curated values as it resolves; empty if the registry is broken
    (the raw files are merged then, as far as they go)."""
    try:
        registry = open_registry(root)
    except ProfilegenError:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for ident, profile in registry.profiles.items():
        data = profile.model_dump(mode="json", exclude_unset=True)
        out[ident] = {k: data[k] for k in CURATED["profiles"] if k in data}
    return out


def keep_curated(kind: str, new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The import's data with the curated values of `old` (a file, or a resolved profile)."""
    out = dict(new)
    for key in CURATED.get(kind, ()):
        if key in old:
            out[key] = old[key]
    return out
