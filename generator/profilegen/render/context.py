"""What every render target shares: the per-profile context and the quoting Jinja environments."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from ..errors import ProfilegenError, printable
from ..families import family
from ..model import Profile
from ..model.common import EnvFrom
from ..model.kv_backends import accepted_dtypes
from ..model.model import Artifact
from ..registry import Registry
from .command import Arg, Var
from .manifest import build_manifest
from .quoting import (
    Interp,
    Shell,
    plain_yaml_value,
    shell_oneline,
    shell_value,
    shell_words,
    yaml_value,
)
from .shelljson import Slot
from .templating import make_environment
from .tunables import LIMITS, EffectiveTunable, effective_tunables, interp

SLOT_KINDS = {"int": "number", "float": "number", "bool": "bool"}


class RenderError(ProfilegenError):
    """A template produced output that does not say what the registry says."""


def served_names(registry: Registry, profile: Profile) -> list[str]:
    """What the engine answers to, exactly as its command passes it: the profile's names (the
    first only where its family takes one); without them the model's served name, or the path
    of the weights file it loaded (llama-server)."""
    engine = registry.engines[profile.engine]
    kin = family(engine.kind)
    names = list(profile.serve.served_names)
    if names:
        return names[:1] if kin.served_names == "one" else names
    if kin.default_served == "model":
        return [registry.models[profile.model].served_name]
    weights = registry.models[profile.model].artifacts[profile.weights]
    path = f"{engine.model_mount}/{weights.local_dir}"
    return [f"{path}/{weights.files[0]}" if weights.files else path]


def container_name(registry: Registry, profile: Profile) -> str:
    prefix = family(registry.engines[profile.engine].kind).container_prefix
    return f"{prefix}-{profile.id}"


@lru_cache(maxsize=8)
def environments(dirs: tuple[Path, ...]) -> dict[str, SandboxedEnvironment]:
    """One sandboxed environment per output language; finalize quotes every value."""
    out = {}
    languages = (
        ("yaml", yaml_value),
        ("config", plain_yaml_value),
        ("shell", shell_value),
        ("text", _text),
    )
    for name, finalize in languages:
        env = make_environment(dirs, finalize)
        env.filters.update(
            arg=Arg.shell,
            ident=_ident,
            expand=_expand,
            oneline=shell_oneline,
            words=lambda values: shell_words(list(values)),
            basename=_basename,
        )
        # The entrypoint's caps (length, number range), from the one place `check` reads.
        env.globals["limits"] = LIMITS
        out[name] = env
    return out


def _ident(name: str) -> Shell:
    """A variable or function name: it must be one, since it is emitted unquoted."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise RenderError(f"{name!r} is not a valid shell name")
    return Shell(name)


def _expand(name: str, operator: str = "") -> Shell:
    """`${NAME}` or `${NAME<op>}` (`-`: empty when unset; `,,`: lower case) for a checked name."""
    if operator not in ("", "-", ":-", ",,"):
        raise RenderError(f"unsupported expansion operator {operator!r}")
    return Shell("${" + _ident(name).text + operator + "}")


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _text(value: object) -> str:
    """Text pages and comments show registry text for what it is: hidden characters (bidi
    overrides, zero-width joiners, controls) are written as escapes."""
    if value is None:
        return "-"
    return printable(str(value), keep="\n\t")


@dataclass(frozen=True)
class ApiKey:
    required: bool
    via: str | None


@dataclass(frozen=True)
class WeightsCheck:
    """Weights the engine loads, which the entrypoint looks for before it starts it."""

    kind: str  # "file" (a GGUF the engine opens) or "folder" (one holding config.json)
    path: str  # where the container has them, exactly as the command passes them
    whose: str  # "the model's", "the projector's", "the drafter's"
    drafting: bool = False  # looked for only while speculative decoding is on


class Context:
    """Everything the templates of one profile may read, computed once."""

    def __init__(self, registry: Registry, profile: Profile) -> None:
        self.registry = registry
        self.profile = profile
        self.engine = registry.engines[profile.engine]
        self.family = family(self.engine.kind)
        self.model = registry.models[profile.model]
        self.rig = registry.rigs[profile.rig]
        self.gpu = registry.gpus[self.rig.gpu]
        self.weights = self.model.artifacts[profile.weights]
        self.mmproj = self.model.artifacts[profile.mmproj] if profile.mmproj else None
        self.drafter = registry.drafters[profile.drafter.id] if profile.drafter else None
        self.tunables = {t.env: t for t in effective_tunables(registry, profile)}
        # The tunable that overrides each registry fact (`envelope.tp` -> TP, or whatever the
        # engine names it): the dialects ask by fact, so a renamed variable still reaches
        # the engine.
        self.by_field = {
            t.field.removeprefix("profile."): t.env for t in self.tunables.values() if t.field
        }
        self.manifest = build_manifest(registry, profile)
        self.container_name = container_name(registry, profile)

    @cached_property
    def kv_backends(self) -> dict[str, list[str]]:
        """What the entrypoint's KV guard checks: each attention backend of the GPU, and ""
        (none named: the engine picks one), with the KV dtypes the container takes with it.
        Empty where the engine's backends do not limit the dtype (model/kv_backends.py)."""
        if not self.family.kv_by_attention_backend or not self.gpu.kv_dtypes_by_backend:
            return {}
        names = [*self.gpu.kv_dtypes_by_backend, None]
        return {n or "": list(accepted_dtypes(self.engine, self.gpu, n)) for n in names}

    @cached_property
    def api_key(self) -> ApiKey:
        """How this server takes its API key (never on its command line), and whether it must."""
        policy = self.profile.serve.api_key or self.registry.settings.serving.api_key
        return ApiKey(policy == "required", self.family.api_key_via)

    @cached_property
    def weights_checks(self) -> list[WeightsCheck]:
        """The weights the command passes the engine: the model's, a projector's (llama.cpp)
        and a drafter's own (only while drafting)."""
        checks = [self._weights_check(self.weights, "the model's")]
        if self.mmproj is not None and self.family.weights_format == "gguf":
            checks.append(self._weights_check(self.mmproj, "the projector's"))
        if self.drafter is not None and self.drafter.artifact is not None:
            drafter = self._weights_check(self.drafter.artifact, "the drafter's")
            checks.append(replace(drafter, drafting=True))
        return checks

    def _weights_check(self, artifact: Artifact, whose: str) -> WeightsCheck:
        # llama-server opens the artifact's first file; vLLM and SGLang load its folder.
        if self.family.weights_format == "gguf" and artifact.files:
            path = self.model_path(artifact.local_dir, artifact.files[0], artifact.subfolder)
            return WeightsCheck("file", path, whose)
        path = self.model_path(artifact.local_dir, subfolder=artifact.subfolder)
        return WeightsCheck("folder", path, whose)

    @cached_property
    def python_paths(self) -> list[str]:
        """Patch folders that join PYTHONPATH at boot, in the profile's patch order."""
        patches = self.registry.patches
        return [p.mount_target for p in self.manifest.patches if patches[p.id].python_path]

    @cached_property
    def served_names(self) -> list[str]:
        return served_names(self.registry, self.profile)

    # Helpers the dialects call, by the registry fact a flag carries (`envelope.tp`).
    def value(self, fact: str, literal: Any) -> Any:
        """The fact's tunable at boot, or the literal when the profile does not expose it."""
        if literal is None or literal == []:
            return None
        env = self.by_field.get(fact)
        return Var(env) if env is not None else literal

    def env_of(self, fact: str) -> str | None:
        """The variable of the tunable that overrides a fact (`envelope.tp`), if any."""
        return self.by_field.get(fact)

    def var(self, fact: str) -> Var:
        """The variable of a fact the entrypoint always sets (the draft width)."""
        env = self.by_field.get(fact)
        if env is None:
            raise RenderError(f"{self.engine.id} has no tunable for {fact}")
        return Var(env)

    def slot(self, fact: str, fallback: Any) -> Any:
        """A JSON value read from the fact's tunable at boot, or the literal."""
        env = self.by_field.get(fact)
        if env is None:
            return fallback
        return Slot(env, SLOT_KINDS.get(self.tunables[env].type, "word"))

    def flag(self, fact: str, default: str) -> str:
        """How this profile (or else its engine build) spells a fact's flag."""
        return self.profile.spellings.get(fact) or self.engine.spellings.get(fact, default)

    def fact(self, fact: str, default_flag: str, *values: Any) -> Arg | None:
        """The argument for a modelled fact, or None when the profile leaves it unset."""
        if values and all(v is None for v in values):
            return None
        return Arg(self.flag(fact, default_flag), tuple(v for v in values if v is not None), fact)

    def switch(self, fact: str, on: bool | None, on_flag: str, off_flag: str | None) -> Arg | None:
        """An on/off flag pair: unset passes neither (the engine's default)."""
        if on is None or (not on and off_flag is None):
            return None
        return Arg(self.flag(fact, on_flag if on else off_flag or on_flag), (), fact)

    def onoff(self, fact: str, default_flag: str, on: bool | None) -> Arg | None:
        """A fact passed as `FLAG on|off`, or as a bare FLAG where the build says so."""
        if on is None:
            return None
        if fact in self.engine.bare_switches:
            return Arg(self.flag(fact, default_flag), (), fact) if on else None
        return Arg(self.flag(fact, default_flag), ("on" if on else "off",), fact)

    def model_path(
        self, artifact_dir: str, file: str | None = None, subfolder: str | None = None
    ) -> str:
        base = f"{self.engine.model_mount}/{artifact_dir}"
        if subfolder:
            base = f"{base}/{subfolder}"
        return f"{base}/{file}" if file else base

    def host_overrides(self) -> list[tuple[str, str]]:
        """Host variables the container environment reads (EnvFrom), with what they set."""
        sets: dict[str, list[str]] = {}
        for name, spec in {**self.engine.env, **self.profile.env}.items():
            if isinstance(spec, EnvFrom) and spec.host[-1] not in ("HF_TOKEN", *self.tunables):
                sets.setdefault(spec.host[-1], []).append(name)
        return [(host, "sets " + ", ".join(names)) for host, names in sorted(sets.items())]

    def host_default(self, host: str) -> str:
        for spec in {**self.engine.env, **self.profile.env}.values():
            if isinstance(spec, EnvFrom) and spec.host[-1] == host:
                return spec.default
        return ""

    def container_tunables(self) -> list[EffectiveTunable]:
        return [t for t in self.tunables.values() if t.scope == "container"]

    def compose_value(self, env: str, fallback: Any) -> Any:
        return Interp(interp(self.tunables, env)) if env in self.tunables else fallback
