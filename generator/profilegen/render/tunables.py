"""The environment variables a rig owner may set, with the profile's defaults."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from ..cache import ByIdentity
from ..model import Profile
from ..model import tunable_values as values
from ..model.tunable_values import format_default
from ..registry import Registry
from .domains import Domain, domain_of

Scope = Literal["container", "compose"]
__all__ = ["LIMITS", "EffectiveTunable", "effective_tunables", "format_default", "interp"]

# What the entrypoint's guards hold every value to (helpers.sh reads them as `limits`).
LIMITS: dict[str, Any] = {
    "longest": dict(values.LONGEST),
    "input": values.LONGEST_INPUT,
    "switch": values.LONGEST_SWITCH,
    "key": values.LONGEST_KEY,
    "largest": values.LARGEST,
    "largest_digits": len(str(values.LARGEST)),
    "largest_text": values.LARGEST_TEXT,
    "smallest_exponent": values.SMALLEST_EXPONENT,
    "smallest_text": values.SMALLEST_TEXT,
}


@dataclass(frozen=True)
class EffectiveTunable:
    env: str
    default: str
    type: str
    help: str
    scope: Scope
    # Set for patch switches: the exports that switching on brings.
    exports: tuple[tuple[str, str], ...] = ()
    # The default while ENABLE_THINKING is true (a sampler's thinking row), if it differs.
    thinking_default: str | None = None
    # Other host variables read, in order, when this one is unset (`tunable_aliases`).
    aliases: tuple[str, ...] = ()
    # What a value may be at boot: the bounds and choices of the field it overrides.
    domain: Domain = Domain()
    # The registry fact it overrides (`profile.envelope.tp`): the one place its name is tied
    # to the fact; the dialects ask for the fact and get this tunable's variable.
    field: str | None = None
    reaches: str = "argv"


def _lookup(path: str, context: dict[str, Any]) -> Any:
    node: Any = context
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else getattr(node, part, None)
        if node is None:
            return None
    return node


def _thinking_value(field: str | None, context: dict[str, Any]) -> Any:
    """A sampler field's value in the thinking row, for sampler tunables."""
    prefix = "profile.serve.sampler."
    if field is None or not field.startswith(prefix):
        return None
    return _lookup("profile.serve.sampler_thinking." + field.removeprefix(prefix), context)


_EFFECTIVE: ByIdentity[tuple[EffectiveTunable, ...]] = ByIdentity(5_000)


def effective_tunables(registry: Registry, profile: Profile) -> list[EffectiveTunable]:
    """Engine tunables whose field the profile sets, patch switches, then the profile's own."""
    engine = registry.engines[profile.engine]
    patches = [registry.patches[p] for p in profile.patches]
    made = _EFFECTIVE.get((profile, engine, *patches), lambda: tuple(_effective(registry, profile)))
    return list(made)


def _effective(registry: Registry, profile: Profile) -> list[EffectiveTunable]:
    engine = registry.engines[profile.engine]
    context = {"profile": profile, "engine": engine}
    out: list[EffectiveTunable] = []
    for tunable in engine.tunables:
        value = tunable.default if tunable.field is None else _lookup(tunable.field, context)
        if value is None or value == []:
            continue
        thinking = _thinking_value(tunable.field, context)
        out.append(
            EffectiveTunable(
                tunable.env,
                format_default(value, tunable.type),
                tunable.type,
                tunable.help,
                tunable.scope,
                thinking_default=None
                if thinking is None
                else format_default(thinking, tunable.type),
                domain=domain_of(tunable.field, engine),
                field=tunable.field,
                reaches=tunable.reaches,
            )
        )
    for patch_id in profile.patches:
        activation = registry.patches[patch_id].activation
        if activation is None:
            continue
        default = profile.switches.get(activation.env, activation.default)
        out.append(
            EffectiveTunable(
                activation.env,
                format_default(default, "switch"),
                "bool",
                activation.help,
                "container",
                tuple(sorted(activation.exports.items())),
            )
        )
    for env, own in profile.tunables.items():
        out.append(
            EffectiveTunable(
                env, format_default(own.default, own.type), own.type, own.help, "container"
            )
        )
    for mount in profile.mounts.values():
        if mount.host_env:
            help_text = mount.help or f"host path mounted at {mount.container}"
            out.append(EffectiveTunable(mount.host_env, mount.host, "path", help_text, "compose"))
    seen: dict[str, EffectiveTunable] = {}
    for item in out:
        aliases = tuple(profile.tunable_aliases.get(item.env, ()))
        seen.setdefault(item.env, replace(item, aliases=aliases) if aliases else item)
    return list(seen.values())


def interp(tunables: dict[str, EffectiveTunable], env: str) -> str:
    """`${ENV:-default}`: defaults are restricted to characters Compose reads literally."""
    tunable = tunables[env]
    text = tunable.default
    for name in reversed((env, *tunable.aliases)):
        text = f"${{{name}:-{text}}}"
    return text
