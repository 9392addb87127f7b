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
        keys = (*CURATED["profiles"], *ADVICE)
        out[ident] = {k: data[k] for k in keys if k in data}
    return out


# What the import reads from the catalogue's pages about a profile (advice.py); a maintainer's
# own entries (a source without a revision) survive a re-import beside the imported ones.
ADVICE = ("best_for_source", "exposures", "exposures_source", "recommendations")


def keep_curated(kind: str, new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The import's data with the curated values of `old` (a file, or a resolved profile)."""
    out = dict(new)
    for key in CURATED.get(kind, ()):
        if key in old:
            out[key] = old[key]
    if kind == "profiles":
        _keep_advice(out, new, old)
    return out


def _keep_advice(out: dict[str, Any], new: dict[str, Any], old: dict[str, Any]) -> None:
    """A kept best_for keeps its source; imported exposures and recommendations replace the
    imported ones, a maintainer's stay; where the import says nothing, what is recorded stays."""
    if "best_for" in old:
        _set(out, "best_for_source", old.get("best_for_source"))
    for key in ("exposures", "recommendations"):
        own = [x for x in old.get(key) or [] if not _imported(x)]
        if key not in new:
            _set(out, key, old.get(key))
        elif own:
            out[key] = [*new[key], *(x for x in own if x not in new[key])]
    if "exposures" not in new:
        _set(out, "exposures_source", old.get("exposures_source"))
    elif out.get("exposures"):
        out.pop("exposures_source", None)


def _imported(item: Any) -> bool:
    return isinstance(item, dict) and bool((item.get("source") or {}).get("rev"))


def _set(out: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        out.pop(key, None)
    else:
        out[key] = value
