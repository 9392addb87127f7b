"""What a profile puts in its container: no reserved variable, no mount over the engine's paths.

The findings are made once per check (`CheckContext.container`): the rules report them, and
the explain rule leaves a profile with such a mistake alone (one mistake, one finding).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from posixpath import normpath

from ..errors import Finding, Severity
from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from ..render.reserved import entrypoint_names, why_reserved
from ..render.targets.compose import SCRIPT_DIR
from ..render.tunables import EffectiveTunable

# Folders of the image itself: a mount there (or above them) replaces the system.
SYSTEM_DIRS = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/root",
     "/run", "/sbin", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/lib", "/usr/local",
     "/usr/local/bin", "/usr/local/lib", "/usr/sbin", "/var"}
)  # fmt: skip


def _owners(registry: Registry, profile: Profile) -> dict[str, str]:
    """What the entrypoint sets each of its inputs from, in the registry's words."""
    engine = registry.engines[profile.engine]
    owners: dict[str, str] = {}
    for tunable in engine.tunables:
        field = (tunable.field or "").removeprefix("profile.")
        owners[tunable.env] = f"`{field}`" if field else f"the {engine.id} tunable"
    for name in profile.tunables:
        owners[name] = f"the profile's `tunables.{name}`"
    for patch_id in profile.patches:
        activation = registry.patches[patch_id].activation
        if activation is not None:
            owners[activation.env] = f"patch {patch_id}'s switch (`activation`)"
            for name in activation.exports:
                owners[name] = f"patch {patch_id}'s switch ({activation.env})"
    return owners


def env_findings(registry: Registry, rendered: Rendered) -> Iterator[Finding]:
    """Each reserved variable the profile (or its engine) puts in the container."""
    profile = registry.profiles[rendered.profile_id]
    owned = entrypoint_names(rendered.script, rendered.helpers.decode())
    owners = _owners(registry, profile)
    engine = registry.engines[profile.engine]
    places = {name: ("engines", engine.id) for name in engine.env}
    places.update({name: ("profiles", profile.id) for name in profile.env})
    for name, (kind, ident) in sorted(places.items()):
        reason = why_reserved(name, owned, owners)
        if reason is not None:
            yield Finding(
                registry.where(kind, ident, ("env", name)),
                f"env: {name} is reserved: {reason}",
                "remove it from env",
                "reserved-env",
                Severity.ERROR,
            )


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def mount_findings(registry: Registry, rendered: Rendered) -> Iterator[Finding]:
    """Each profile mount that would hide one of the engine's or the entrypoint's paths."""
    profile = registry.profiles[rendered.profile_id]
    engine = registry.engines[profile.engine]
    taken = {engine.model_mount: "the model mount", SCRIPT_DIR: "the entrypoint's folder"}
    taken.update({p.mount_target: f"the mount of patch {p.id}" for p in rendered.manifest.patches})
    for key, mount in sorted(profile.mounts.items()):
        target = normpath(mount.container)
        clash = next((what for path, what in taken.items() if _overlaps(target, path)), None)
        if clash is None and target in SYSTEM_DIRS:
            clash = "a system folder of the image"
        if clash is not None:
            yield Finding(
                registry.where("profiles", profile.id, ("mounts", key, "container")),
                f"mounts.{key}: {mount.container} lands on {clash}, which would hide it",
                "mount somewhere else",
                "reserved-mount",
                Severity.ERROR,
            )


def container_findings(
    registry: Registry, rendered: Rendered, tunables: list[EffectiveTunable]
) -> list[Finding]:
    """The profile's container mistakes; `tunables`: its effective tunables."""
    return [
        *env_findings(registry, rendered),
        *mount_findings(registry, rendered),
        *tunable_findings(registry, rendered, tunables),
    ]


_WORD = re.compile(r"[A-Za-z0-9_]+")
_DECLARED = re.compile(r"\s*(?:pg_tunable|pg_range|pg_oneof) ([A-Za-z0-9_]+)\b")
_THINKING = re.compile(r"\|\| ([A-Za-z0-9_]+)=")


@lru_cache(maxsize=512)
def _used_names(script: str) -> frozenset[str]:
    """The names the script uses beyond declaring and checking them: a line declaring NAME
    (pg_tunable, pg_range, pg_oneof) or setting it after `||` is no use of NAME; comments are
    none at all."""
    used: set[str] = set()
    for line in script.splitlines():
        if line.lstrip().startswith("#"):
            continue
        skip = {m.group(1) for m in _THINKING.finditer(line)}
        declared = _DECLARED.match(line)
        if declared:
            skip.add(declared.group(1))
        used.update(w for w in _WORD.findall(line) if w not in skip)
    return frozenset(used)


def tunable_findings(
    registry: Registry, rendered: Rendered, tunables: list[EffectiveTunable]
) -> Iterator[Finding]:
    """A tunable that overrides a registry fact but never reaches the engine's command line
    (or the entrypoint step that reads it): overriding it would change nothing."""
    profile = registry.profiles[rendered.profile_id]
    script = rendered.script
    for tunable in tunables:
        if tunable.scope != "container" or tunable.field is None or tunable.reaches != "argv":
            continue
        if tunable.env in _used_names(script):
            continue
        field = tunable.field.removeprefix("profile.")
        names = [t.env for t in registry.engines[profile.engine].tunables]
        at = ("tunables", names.index(tunable.env), "env") if tunable.env in names else ()
        yield Finding(
            registry.where("engines", profile.engine, at),
            f"tunable {tunable.env} (overrides {field}) never reaches the engine of "
            f"{profile.id}: its command line takes {field} from another variable or not at all",
            "name the tunable the way the engine's dialect reads the fact, or drop it",
            "tunable-unused",
            Severity.ERROR,
        )
