"""Resolves `extends` chains and cross-references between registry entities."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..errors import FindingSink, Location, suggest
from ..model import Profile
from .memo import PROFILES
from .safeyaml import NodePath
from .source import Registry, Source
from .validate import report_validation

# Keys that describe one file and are never inherited from the profile it extends.
NOT_INHERITED = frozenset(
    {"id", "extends", "abstract", "upstream_key", "title", "siblings", "alternatives", "evidence"}
)


def merge(
    base: dict[str, Any],
    base_lines: dict[NodePath, Location],
    over: dict[str, Any],
    over_lines: dict[NodePath, Location],
    prefix: NodePath = (),
) -> tuple[dict[str, Any], dict[NodePath, Location]]:
    """Deep-merges mappings (lists and scalars are replaced), keeping each value's origin.

    Returns the merged mapping and the locations of the nodes at and under `prefix`; each
    level looks only at the locations under its own key, so a merge is linear in size.
    """
    out = dict(base)
    below = _by_key(base_lines, prefix)
    over_below = _by_key(over_lines, prefix)
    for key, value in over.items():
        here = (*prefix, key)
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key], below[key] = merge(
                out[key], below.get(key, {}), value, over_below.get(key, {}), here
            )
        else:
            out[key] = value
            below[key] = dict(over_below.get(key, {}))
        if here in over_lines:
            below[key][here] = over_lines[here]
    lines = {prefix: base_lines[prefix]} if prefix in base_lines else {}
    for group in below.values():
        lines.update(group)
    return out, lines


def _by_key(
    lines: dict[NodePath, Location], prefix: NodePath
) -> dict[Any, dict[NodePath, Location]]:
    """The locations strictly under `prefix`, grouped by the key that follows it."""
    depth = len(prefix)
    groups: dict[Any, dict[NodePath, Location]] = {}
    for path, location in lines.items():
        if len(path) > depth and path[:depth] == prefix:
            groups.setdefault(path[depth], {})[path] = location
    return groups


# Real families are three or four levels deep; a bound keeps resolving linear in the
# number of profiles (every profile merges its whole chain).
MAX_EXTENDS = 16


def _chain(
    ident: str, raw: dict[str, tuple[dict[str, Any], Source]]
) -> tuple[list[str], tuple[str, str] | None]:
    """The extends chain from the root ancestor down to `ident`, or why there is none
    (a cycle, or more than MAX_EXTENDS levels) as (rule, message)."""
    chain = [ident]
    seen = {ident}
    current = ident
    while True:
        parent = raw[current][0].get("extends")
        if parent is None or parent not in raw:
            return list(reversed(chain)), None
        if parent in seen:
            loop = " -> ".join([*chain, parent])
            return chain, ("extends-cycle", f"extends cycle: {loop}")
        if len(chain) > MAX_EXTENDS:
            text = (
                f"extends chain is deeper than {MAX_EXTENDS} levels ({' -> '.join(chain[:4])} -> …)"
            )
            return chain, ("extends-depth", text)
        chain.append(parent)
        seen.add(parent)
        current = parent


def _broken_ancestor(
    ident: str, raw: dict[str, tuple[dict[str, Any], Source]], broken: set[tuple[str, str]]
) -> bool:
    """Whether the extends chain of `ident` reaches a profile whose file is invalid."""
    seen = {ident}
    parent = raw[ident][0].get("extends")
    while isinstance(parent, str) and parent not in seen and len(seen) <= MAX_EXTENDS:
        if ("profiles", parent) in broken:
            return True
        if parent not in raw:
            return False
        seen.add(parent)
        parent = raw[parent][0].get("extends")
    return False


def resolve_profiles(
    registry: Registry,
    raw: dict[str, tuple[dict[str, Any], Source]],
    sink: FindingSink,
    digests: dict[str, str] | None = None,
) -> None:
    """Each concrete profile merged down its extends chain and validated (`digests`, the
    text digest of each profile's file, lets a chain of unchanged texts reuse its result)."""
    digests = digests or {}
    for ident in sorted(raw):
        data, source = raw[ident]
        if _broken_ancestor(ident, raw, registry.broken):
            # Its parent's own file is the mistake (reported there), not this profile.
            registry.broken.add(("profiles", ident))
            continue
        parent = data.get("extends")
        if parent is not None and parent not in raw:
            if ("profiles", parent) not in registry.broken:
                close = suggest(parent, list(raw))
                sink.add(
                    source.where(("extends",)),
                    f"extends unknown profile {parent!r}",
                    hint=f"did you mean {close!r}?" if close else None,
                    rule="reference",
                )
            continue
        chain, problem = _chain(ident, raw)
        if problem is not None:
            rule, message = problem
            sink.add(source.where(("extends",)), message, rule=rule)
            continue
        key = tuple((raw[name][1].file, digests.get(name, "")) for name in chain)
        known = PROFILES.get(key) if all(d for _, d in key) else None
        if known is not None:
            profile, lines = known
            registry.profiles[ident] = profile
            registry.sources[("profiles", ident)] = Source(
                source.file, owner=ident, located=dict(lines)
            )
            continue
        merged, lines = _merged(ident, chain, raw)
        resolved = Source(source.file, owner=ident, located=lines)
        resolved.lines[()] = source.where()
        if merged.get("abstract"):
            # An abstract base is only ever read through the profiles that extend it.
            registry.abstract_profiles.add(ident)
            continue
        try:
            registry.profiles[ident] = Profile.model_validate(merged)
        except ValidationError as exc:
            report_validation(exc, Profile, merged, resolved.where, sink)
            continue
        registry.sources[("profiles", ident)] = resolved
        if all(d for _, d in key):
            PROFILES.put(key, (registry.profiles[ident], dict(resolved.lines)))


def _merged(
    ident: str, chain: list[str], raw: dict[str, tuple[dict[str, Any], Source]]
) -> tuple[dict[str, Any], dict[NodePath, Location]]:
    """The profile's data merged down its extends chain, with each value's location."""
    merged: dict[str, Any] = {}
    lines: dict[NodePath, Location] = {}
    for name in chain:
        layer, layer_source = raw[name]
        if name != ident:
            layer = {k: v for k, v in layer.items() if k not in NOT_INHERITED}
        merged, lines = merge(merged, lines, layer, layer_source.lines)
    merged.pop("extends", None)
    merged["extends"] = raw[ident][0].get("extends")
    return merged, lines


def _ref(
    sink: FindingSink,
    where: Location,
    what: str,
    name: str | None,
    known: dict[str, Any],
    broken: frozenset[str] = frozenset(),
) -> bool:
    if name is None or name in known:
        return True
    if name in broken:
        # The entity exists but its own file is invalid; that finding says why.
        return False
    close = suggest(name, list(known))
    sink.add(
        where,
        f"{what} {name!r} is not defined",
        hint=f"did you mean {close!r}?"
        if close
        else f"known: {', '.join(sorted(known)) or 'none'}",
        rule="reference",
    )
    return False


def _broken(registry: Registry, kind: str) -> frozenset[str]:
    return frozenset(i for k, i in registry.broken if k == kind)


def check_references(registry: Registry, sink: FindingSink) -> None:
    """Every name one entity uses for another must exist (with a did-you-mean)."""
    for rig in registry.rigs.values():
        _ref(
            sink,
            registry.where("rigs", rig.id, ("gpu",)),
            "gpu",
            rig.gpu,
            registry.gpus,
            _broken(registry, "gpus"),
        )
        for i, card in enumerate(rig.cards):
            where = registry.where("rigs", rig.id, ("cards", i))
            _ref(sink, where, "gpu", card, registry.gpus, _broken(registry, "gpus"))
    for patch in registry.patches.values():
        where = registry.where("patches", patch.id, ("engine",))
        _ref(sink, where, "engine", patch.engine, registry.engines, _broken(registry, "engines"))
    for drafter in registry.drafters.values():
        for i, model in enumerate(drafter.models):
            where = registry.where("drafters", drafter.id, ("models", i))
            _ref(sink, where, "model", model, registry.models, _broken(registry, "models"))
    for profile in registry.profiles.values():
        _profile_refs(registry, profile, sink)
    _unique_upstream_keys(registry, sink)
    for gateway in registry.gateways.values():
        _gateway_refs(registry, gateway.id, [m.profile for m in gateway.members], sink)


def _gateway_refs(registry: Registry, ident: str, members: list[str], sink: FindingSink) -> None:
    """A gateway routes to concrete profiles (an abstract base never serves)."""
    for i, name in enumerate(members):
        where = registry.where("gateways", ident, ("members", i, "profile"))
        if name in registry.abstract_profiles:
            sink.add(
                where,
                f"profile {name!r} is abstract: it never serves",
                hint="name a profile that extends it",
                rule="reference",
            )
        else:
            _ref(sink, where, "profile", name, registry.profiles, _broken(registry, "profiles"))


def _unique_upstream_keys(registry: Registry, sink: FindingSink) -> None:
    """An upstream key names one profile: a second one would make lookups pick either."""
    owners: dict[str, list[str]] = {}
    for profile in registry.concrete_profiles():
        if profile.upstream_key is not None:
            owners.setdefault(profile.upstream_key, []).append(profile.id)
    for key, ids in sorted(owners.items()):
        if len(ids) < 2:
            continue
        for ident in ids:
            others = [
                f"{o} ({registry.where('profiles', o, ('upstream_key',))})"
                for o in ids
                if o != ident
            ]
            sink.add(
                registry.where("profiles", ident, ("upstream_key",)),
                f"upstream_key {key!r} is also the key of {', '.join(others)}",
                hint="each upstream key names one profile; keep it on one of them",
                rule="reference",
            )


def _profile_refs(registry: Registry, profile: Profile, sink: FindingSink) -> None:
    def at(*node: str | int) -> Location:
        return registry.where("profiles", profile.id, node)

    if _ref(
        sink, at("model"), "model", profile.model, registry.models, _broken(registry, "models")
    ):
        model = registry.models[profile.model]
        artifacts = model.artifacts
        _ref(sink, at("weights"), f"weights variant of {model.id}", profile.weights, artifacts)
        _ref(sink, at("mmproj"), f"projector variant of {model.id}", profile.mmproj, artifacts)
    _ref(
        sink, at("engine"), "engine", profile.engine, registry.engines, _broken(registry, "engines")
    )
    _ref(sink, at("rig"), "rig", profile.rig, registry.rigs, _broken(registry, "rigs"))
    if profile.drafter is not None:
        ok = _ref(
            sink,
            at("drafter", "id"),
            "drafter",
            profile.drafter.id,
            registry.drafters,
            _broken(registry, "drafters"),
        )
        if ok:
            drafter = registry.drafters[profile.drafter.id]
            if profile.drafter.width > drafter.max_width:
                sink.add(
                    at("drafter", "width"),
                    f"drafter width {profile.drafter.width} exceeds {drafter.id}'s maximum",
                    hint=f"at most {drafter.max_width}",
                    rule="reference",
                )
    for i, patch in enumerate(profile.patches):
        _ref(sink, at("patches", i), "patch", patch, registry.patches, _broken(registry, "patches"))
    for i, ev in enumerate(profile.evidence):
        _ref(
            sink, at("evidence", i, "rig"), "rig", ev.rig, registry.rigs, _broken(registry, "rigs")
        )
        engines = registry.engines
        _ref(
            sink,
            at("evidence", i, "engine"),
            "engine",
            ev.engine,
            engines,
            _broken(registry, "engines"),
        )
        if ev.weights is not None and profile.model in registry.models:
            artifacts = registry.models[profile.model].artifacts
            _ref(
                sink,
                at("evidence", i, "weights"),
                f"weights variant of {profile.model}",
                ev.weights,
                artifacts,
            )
