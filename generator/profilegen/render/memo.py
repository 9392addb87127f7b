"""A profile's render, reused while nothing it reads has changed.

The key covers exactly what `render_profile` reads: the resolved profile and the engine,
model, rig, GPU, drafter and patches it names (as validated data), the registry's own
templates/ (by their bytes) and profilegen itself. Changing one profile re-renders that
profile alone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel

from ..cache import ByIdentity, Store, code_digest, tree_digest
from ..cache.fingerprint import Unfingerprintable
from ..model import Profile
from ..registry import Registry
from .targets.compose import Rendered, render_profile

_TEMPLATES: dict[Path, str | None] = {}


def render_profile_cached(registry: Registry, profile: Profile) -> Rendered:
    """The profile's render (immutable: this process keeps the ones it made or read)."""
    return Store("profile", keep=1_000).remember(
        _key(registry, profile),
        lambda: render_profile(registry, profile),
        lambda hit: isinstance(hit, Rendered) and hit.profile_id == profile.id,
    )


def profile_key(registry: Registry, profile: Profile, salt: str = "") -> str | None:
    """A digest of everything a render of `profile` reads (None: not fingerprintable);
    `salt` separates the results of other targets built from the same inputs."""
    key = _key(registry, profile)
    return None if key is None else hashlib.sha256(f"{salt}\0{key}".encode()).hexdigest()


def _key(registry: Registry, profile: Profile) -> str | None:
    templates = _templates(registry.root)
    if templates is None:
        return None
    rig = registry.rigs[profile.rig]
    read: list[BaseModel] = [
        profile,
        registry.engines[profile.engine],
        registry.models[profile.model],
        rig,
        registry.gpus[rig.gpu],
    ]
    if profile.drafter is not None:
        read.append(registry.drafters[profile.drafter.id])
    read += [registry.patches[p] for p in profile.patches]
    parts = [code_digest(), templates, *map(_json, read)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


_JSON: ByIdentity[str] = ByIdentity(5_000)


def _json(entity: BaseModel) -> str:
    """The entity as JSON (frozen: written once per object)."""
    return _JSON.get((entity,), entity.model_dump_json)


def _templates(root: Path) -> str | None:
    if root not in _TEMPLATES:
        try:
            _TEMPLATES[root] = tree_digest(root, ("templates",))
        except (Unfingerprintable, OSError):
            _TEMPLATES[root] = None
    return _TEMPLATES[root]
