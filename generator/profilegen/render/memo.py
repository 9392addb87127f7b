"""A profile's render, reused while nothing it reads has changed.

The key covers exactly what `render_profile` reads: the resolved profile and the engine,
model, rig, GPU, drafter and patches it names (as validated data), the registry's own
templates/ (by their bytes) and profilegen itself. Changing one profile re-renders that
profile alone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..cache import Store, code_digest, tree_digest
from ..cache.fingerprint import Unfingerprintable
from ..model import Profile
from ..registry import Registry
from .targets.compose import Rendered, render_profile

_TEMPLATES: dict[Path, str | None] = {}


def render_profile_cached(registry: Registry, profile: Profile) -> Rendered:
    return Store("profile").remember(
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
    parts = [
        code_digest(),
        templates,
        profile.model_dump_json(),
        registry.engines[profile.engine].model_dump_json(),
        registry.models[profile.model].model_dump_json(),
        rig.model_dump_json(),
        registry.gpus[rig.gpu].model_dump_json(),
    ]
    if profile.drafter is not None:
        parts.append(registry.drafters[profile.drafter.id].model_dump_json())
    parts += [registry.patches[p].model_dump_json() for p in profile.patches]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _templates(root: Path) -> str | None:
    if root not in _TEMPLATES:
        try:
            _TEMPLATES[root] = tree_digest(root, ("templates",))
        except (Unfingerprintable, OSError):
            _TEMPLATES[root] = None
    return _TEMPLATES[root]
