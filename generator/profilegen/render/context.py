"""What every render target shares: the per-profile context and the quoting Jinja environments."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from ..errors import ProfilegenError
from ..model import Profile
from ..registry import Registry
from .manifest import build_manifest
from .quoting import Interp, Shell, shell_oneline, shell_value, shell_words, yaml_value
from .shelljson import Slot
from .templating import make_environment
from .tunables import EffectiveTunable, effective_tunables, interp

SLOT_KINDS = {"int": "number", "float": "number", "bool": "bool"}


class RenderError(ProfilegenError):
    """A template produced output that does not say what the registry says."""


def container_name(registry: Registry, profile: Profile) -> str:
    kind = registry.engines[profile.engine].kind.replace(".", "")
    return f"{kind}-{profile.id}"


@lru_cache(maxsize=8)
def environments(dirs: tuple[Path, ...]) -> dict[str, SandboxedEnvironment]:
    """One sandboxed environment per output language; finalize quotes every value."""
    out = {}
    for name, finalize in (("yaml", yaml_value), ("shell", shell_value), ("text", _text)):
        env = make_environment(dirs, finalize)
        env.filters.update(
            ident=_ident,
            expand=_expand,
            oneline=shell_oneline,
            words=shell_words,
            basename=_basename,
        )
        out[name] = env
    return out


def _ident(name: str) -> Shell:
    """A variable or function name: it must be one, since it is emitted unquoted."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise RenderError(f"{name!r} is not a valid shell name")
    return Shell(name)


def _expand(name: str, operator: str = "") -> Shell:
    """`${NAME}` or `${NAME<op>}` (e.g. `-` for "empty when unset") for a checked name."""
    if operator not in ("", "-", ":-"):
        raise RenderError(f"unsupported expansion operator {operator!r}")
    return Shell("${" + _ident(name).text + operator + "}")


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _text(value: object) -> str:
    if value is None:
        return "-"
    return str(value)


class Context:
    """Everything the templates of one profile may read, computed once."""

    def __init__(self, registry: Registry, profile: Profile) -> None:
        self.registry = registry
        self.profile = profile
        self.engine = registry.engines[profile.engine]
        self.model = registry.models[profile.model]
        self.rig = registry.rigs[profile.rig]
        self.gpu = registry.gpus[self.rig.gpu]
        self.weights = self.model.artifacts[profile.weights]
        self.mmproj = self.model.artifacts[profile.mmproj] if profile.mmproj else None
        self.drafter = registry.drafters[profile.drafter.id] if profile.drafter else None
        self.tunables = {t.env: t for t in effective_tunables(registry, profile)}
        self.manifest = build_manifest(registry, profile)
        self.container_name = container_name(registry, profile)
        self.served_name = profile.serve.served_name or self.model.served_name

    # Helpers the templates call.
    def var(self, env: str, fallback: Any = None) -> Any:
        """A tunable's value at boot (`"${ENV}"`), or the literal when not tunable."""
        return Shell(f'"${{{env}}}"') if env in self.tunables else fallback

    def slot(self, env: str, fallback: Any) -> Any:
        tunable = self.tunables.get(env)
        if tunable is None:
            return fallback
        return Slot(env, SLOT_KINDS.get(tunable.type, "word"))

    def model_path(self, artifact_dir: str, file: str | None = None) -> str:
        base = f"{self.engine.model_mount}/{artifact_dir}"
        return f"{base}/{file}" if file else base

    def kwarg_env(self, key: str) -> str:
        """Chat-template kwargs are tunable by the upper-cased key (ENABLE_THINKING)."""
        return key.upper()

    def container_tunables(self) -> list[EffectiveTunable]:
        return [t for t in self.tunables.values() if t.scope == "container"]

    def compose_value(self, env: str, fallback: Any) -> Any:
        return Interp(interp(self.tunables, env)) if env in self.tunables else fallback
