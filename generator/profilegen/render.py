"""Renders a profile into compose.yaml, patches.manifest.json and .env.example (pure)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from .errors import ProfilegenError
from .manifest import Manifest, build_manifest, manifest_bytes
from .models import Profile
from .quoting import (
    Interp,
    RawYaml,
    Shell,
    comment_lines,
    compose_escape,
    shell_oneline,
    shell_value,
    shell_words,
    yaml_block,
    yaml_value,
)
from .registry import Registry
from .resources import template_dirs
from .shelljson import Slot, json_word
from .templating import make_environment
from .tunables import EffectiveTunable, effective_tunables, interp
from .view import container_name

COMPOSE_DIR = "compose"
ENGINE_TEMPLATES = {"vllm": "vllm", "llama.cpp": "llamacpp", "sglang": "sglang"}
SLOT_KINDS = {"int": "number", "float": "number", "bool": "bool"}


class RenderError(ProfilegenError):
    """A template produced output that does not say what the registry says."""


@dataclass(frozen=True)
class Rendered:
    profile_id: str
    compose: bytes
    manifest: Manifest
    manifest_json: bytes
    env_example: bytes
    service: dict[str, Any]

    def files(self) -> dict[str, bytes]:
        """Checked-in files of compose/<id>/, by name."""
        return {
            "compose.yaml": self.compose,
            "patches.manifest.json": self.manifest_json,
            ".env.example": self.env_example,
        }


@lru_cache(maxsize=8)
def _environments(dirs: tuple[Path, ...]) -> dict[str, SandboxedEnvironment]:
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


def _project_name(profile_id: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "-", profile_id)


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


def _environment(ctx: Context) -> dict[str, Any]:
    """The container environment, in a stable, readable order."""
    profile = ctx.profile
    env: dict[str, Any] = {}
    for tunable in ctx.container_tunables():
        env[tunable.env] = Interp(interp(ctx.tunables, tunable.env))
    if ctx.drafter is not None:
        # SPEC=off is read at boot; unset stays empty, never a default that hides SPEC_N.
        env["SPEC"] = Interp("${SPEC:-}")
    # Secrets only ever pass through from the host: never a literal token.
    env["HUGGING_FACE_HUB_TOKEN"] = Interp("${HF_TOKEN:-}")
    offline = ctx.tunables.get("OFFLINE")
    if offline is not None:
        env["HF_HUB_OFFLINE"] = Interp(interp(ctx.tunables, "OFFLINE"))
        env["TRANSFORMERS_OFFLINE"] = Interp(interp(ctx.tunables, "OFFLINE"))
    for name in profile.passthrough:
        env[name] = None
    for name, value in profile.env.items():
        env.setdefault(name, value)
    return env


def _volumes(ctx: Context) -> list[dict[str, Any]]:
    engine = ctx.engine
    volumes = [
        {
            "type": "bind",
            "source": ctx.compose_value("MODEL_DIR", "./models"),
            "target": engine.model_mount,
            "read_only": engine.model_mount_readonly,
        }
    ]
    for patch in ctx.manifest.patches:
        volumes.append(
            {
                "type": "bind",
                "source": f"./{patch.bundle_dir}",
                "target": patch.mount_target,
                "read_only": True,
            }
        )
    for mount in ctx.profile.mounts.values():
        source: Any = (
            Interp(f"${{{mount.host_env}:-{mount.host}}}") if mount.host_env else mount.host
        )
        volumes.append(
            {
                "type": "bind",
                "source": source,
                "target": mount.container,
                "read_only": mount.readonly,
            }
        )
    return volumes


def _service(ctx: Context, script: str) -> dict[str, Any]:
    profile = ctx.profile
    engine = ctx.engine
    port = ctx.compose_value("PORT", profile.port)
    host = ctx.compose_value("BIND_HOST", profile.bind_host)
    host_text = host.text if isinstance(host, Interp) else host
    port_text = port.text if isinstance(port, Interp) else str(port)
    service: dict[str, Any] = {
        "image": ctx.compose_value(engine.image_env or "", engine.image_ref),
        "container_name": ctx.container_name,
        "restart": ctx.compose_value("CLUB3090_RESTART", profile.restart),
    }
    if profile.user_gid is not None:
        gid = ctx.compose_value("DOCKER_GID", profile.user_gid)
        service["user"] = Interp(f"0:{gid.text}") if isinstance(gid, Interp) else f"0:{gid}"
    if engine.ipc_host:
        service.update({"ipc": "host", "shm_size": profile.shm_size})
    service.update(
        {
            "ports": [Interp(f"{host_text}:{port_text}:{engine.container_port}")],
            "environment": _environment(ctx),
            "volumes": _volumes(ctx),
            "deploy": {
                "resources": {
                    "reservations": {
                        "devices": [{"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}]
                    }
                }
            },
            "labels": {
                "io.profilegen.profile": profile.id,
                "io.profilegen.status": profile.status,
                "io.profilegen.title": profile.title,
                "io.profilegen.image": engine.image_ref,
            },
            "entrypoint": ["/bin/bash", "-c", script, f"profilegen-{profile.id}"],
        }
    )
    return service


def _header(ctx: Context, envs: dict[str, SandboxedEnvironment]) -> RawYaml:
    text = envs["text"].get_template("common/header.txt.j2").render(c=ctx, p=ctx.profile)
    return RawYaml(comment_lines(text.rstrip("\n")))


def render_profile(registry: Registry, profile: Profile) -> Rendered:
    """Renders one profile; pure: the registry in, bytes out."""
    envs = _environments(tuple(template_dirs(registry.root)))
    ctx = Context(registry, profile)
    kind = ENGINE_TEMPLATES[ctx.engine.kind]
    script = (
        envs["shell"]
        .get_template(f"{kind}/entrypoint.sh.j2")
        .render(c=ctx, p=ctx.profile, env=ctx.profile.envelope, json_arg=json_word)
    )
    service = _service(ctx, script)
    compose = (
        envs["yaml"]
        .get_template("common/compose.yaml.j2")
        .render(
            c=ctx,
            header=_header(ctx, envs),
            project=_project_name(profile.id),
            service_name=_project_name(profile.id),
            s=service,
            block=yaml_block,
        )
    )
    env_example = envs["text"].get_template("common/env.example.j2").render(c=ctx, p=profile)
    manifest = ctx.manifest
    rendered = Rendered(
        profile_id=profile.id,
        compose=compose.encode(),
        manifest=manifest,
        manifest_json=manifest_bytes(manifest),
        env_example=env_example.encode(),
        service=service,
    )
    from .verify import verify_rendered

    verify_rendered(rendered)
    return rendered


def plan_all(registry: Registry) -> dict[str, bytes]:
    """The whole checked-in generated tree (compose/ and docs/): relative path -> bytes."""
    plan: dict[str, bytes] = {}
    for profile in registry.concrete_profiles():
        rendered = render_profile(registry, profile)
        for name, content in rendered.files().items():
            plan[f"{COMPOSE_DIR}/{profile.id}/{name}"] = content
    from .docs import docs_plan

    plan.update(docs_plan(registry))
    return plan


def intended_json(service: dict[str, Any]) -> Any:
    """The service as plain data, the way a YAML parser will read it back."""

    def plain(value: Any) -> Any:
        if isinstance(value, Interp):
            return value.text
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, str):
            return compose_escape(value)
        return value

    return json.loads(json.dumps(plain(service)))
