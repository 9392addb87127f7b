"""Read-only views of the registry: the profile list and a fully resolved profile."""

from __future__ import annotations

from typing import Any

from ..lockfile.artifacts import profile_artifacts
from ..lockfile.lock import Lock
from ..lockfile.pins import lock_or_none, lock_pin, pin_label
from ..model import Profile
from ..model.model import FactOrigin, Model
from ..registry import Registry
from ..render import container_name, served_names


def artifact_view(registry: Registry, profile: Profile) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lock = lock_or_none(registry.root)
    for role, key, artifact in profile_artifacts(registry, profile):
        data = {"key": key, **artifact.model_dump(mode="json"), "size_bytes": artifact.size_bytes}
        # Whether fetch downloads one commit or whatever a branch holds (lockfile/pins.py).
        data["pin"] = pin_label(artifact, lock_pin(artifact, key, lock))
        out[role] = data
    return out


def profile_view(registry: Registry, profile: Profile) -> dict[str, Any]:
    """The profile with every reference resolved to the facts it points at."""
    engine = registry.engines[profile.engine]
    rig = registry.rigs[profile.rig]
    model = registry.models[profile.model]
    data = profile.model_dump(mode="json", exclude={"abstract"})
    data["resolved"] = {
        "engine": {"kind": engine.kind, "image": engine.image_ref, "image_env": engine.image_env},
        "model": {
            "name": model.name,
            "served_names": served_names(registry, profile),
        },
        "rig": {"gpu": rig.gpu, "count": rig.count, "host_os": rig.host_os},
        "artifacts": artifact_view(registry, profile),
        "drafter": None,
        "container_name": container_name(registry, profile),
    }
    if profile.drafter is not None:
        drafter = registry.drafters[profile.drafter.id]
        data["resolved"]["drafter"] = {
            "method": drafter.method,
            "builtin": drafter.builtin,
            "repo": drafter.artifact.repo if drafter.artifact else None,
            "spec_n_default": profile.drafter.width,
            "max_width": drafter.max_width,
        }
    return data


def _leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted path -> value of every stated (non-null) leaf."""
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(_leaves(value, f"{prefix}{key}."))
        return out
    return {} if data is None else {prefix[:-1]: data}


def _covered(path: str, attributed: set[str]) -> bool:
    return any(path == a or path.startswith(f"{a}.") for a in attributed)


def model_view(registry: Registry, model: Model) -> dict[str, Any]:
    """The model, and each fact with where it came from (or that nobody recorded it)."""
    data = model.model_dump(mode="json", exclude={"provenance"}, exclude_none=True)
    facts = model.provenance.facts
    sources = model.provenance.sources
    shown: dict[str, Any] = {}
    leaves = _leaves(data)
    for path, origin in facts.items():
        # A fact that is a mapping (an artifact's size) shows its parts.
        parts = {k[len(path) + 1 :]: v for k, v in leaves.items() if k.startswith(f"{path}.")}
        value = leaves.get(path, parts or "(see the file)")
        if isinstance(origin, FactOrigin):
            src = sources[origin.source]
            where = f"{src.repo}/{src.file}@{src.revision[:12]}"
            shown[path] = {"value": value, "read_from": where}
            if origin.key is not None:
                shown[path]["key"] = origin.key
            if origin.estimate is not None:
                shown[path]["estimate"] = origin.estimate
        else:
            shown[path] = {"value": value, "stated": True}
    # Names and the artifacts' own pins (the lock vouches for those) are not checkpoint facts.
    skip = ("id", "name", "served_name", "artifacts.")
    stated = model.model_dump(mode="json", exclude={"provenance"}, exclude_defaults=True)
    unattributed = [
        path
        for path in _leaves(stated)
        if not _covered(path, set(facts)) and not path.startswith(skip)
    ]
    data["provenance"] = shown
    data["unattributed"] = unattributed
    data["profiles"] = sorted(p.id for p in registry.concrete_profiles() if p.model == model.id)
    return data


def list_rows(registry: Registry) -> list[dict[str, Any]]:
    lock = lock_or_none(registry.root)
    rows = []
    for profile in registry.concrete_profiles():
        engine = registry.engines[profile.engine]
        env = profile.envelope
        rows.append(
            {
                "id": profile.id,
                "upstream_key": profile.upstream_key,
                "status": profile.status,
                "engine": engine.kind,
                "image": engine.image_ref,
                "model": profile.model,
                "weights": profile.weights,
                "weights_pinned": _weights_pinned(registry, profile, lock),
                "drafter": profile.drafter.id if profile.drafter else None,
                "spec_n": profile.drafter.width if profile.drafter else 0,
                "rig": profile.rig,
                "tp": env.tp,
                "kv_cache_dtype": env.kv_cache_dtype,
                "max_model_len": env.max_model_len,
                "max_num_seqs": env.max_num_seqs,
                "gpu_memory_utilization": env.gpu_memory_utilization,
                "port": profile.port,
            }
        )
    return rows


def _weights_pinned(registry: Registry, profile: Profile, lock: Lock | None) -> bool:
    """Whether every artifact the profile mounts is pinned to a commit (lockfile/pins.py)."""
    return all(
        lock_pin(artifact, key, lock).pinned
        for _role, key, artifact in profile_artifacts(registry, profile)
    )
