"""The compose target: compose.yaml, patches.manifest.json and .env.example of a profile (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from ...model import Profile
from ...model.common import EnvFrom, EnvSpec
from ...registry import Registry
from ...resources import template_dirs
from ..command import EngineCommand
from ..context import Context, environments
from ..dialects import engine_command
from ..manifest import Manifest, manifest_bytes
from ..quoting import Interp, RawYaml, comment_lines, yaml_block
from ..tunables import interp
from ..verify import verify_compose

# Where the container finds the entrypoint and its helpers (both mounted read-only from the
# bundle); it runs `bash -p`, so no variable of its environment changes how bash starts.
SCRIPT_DIR = "/profilegen"
ENTRYPOINT = "entrypoint.sh"
HELPERS = "helpers.sh"
SCRIPT_FILES = (ENTRYPOINT, HELPERS)


@dataclass(frozen=True)
class Rendered:
    profile_id: str
    compose: bytes
    manifest: Manifest
    manifest_json: bytes
    env_example: bytes
    service: dict[str, Any]
    command: EngineCommand
    entrypoint: bytes
    helpers: bytes

    def files(self) -> dict[str, bytes]:
        """Files of compose/<id>/ (and of a bundle), by name."""
        return {
            "compose.yaml": self.compose,
            ENTRYPOINT: self.entrypoint,
            HELPERS: self.helpers,
            "patches.manifest.json": self.manifest_json,
            ".env.example": self.env_example,
        }

    @property
    def script(self) -> str:
        """The entrypoint script the service runs (`bash -p entrypoint.sh`), as rendered."""
        return self.entrypoint.decode()


def _project_name(profile_id: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "-", profile_id)


def env_value(name: str, spec: EnvSpec) -> Any:
    """A container variable as Compose reads it: literal, host pass-through (None) or default."""
    if isinstance(spec, EnvFrom):
        text = spec.default
        for host in reversed(spec.host):
            text = f"${{{host}:-{text}}}"
        return Interp(text)
    return spec


def _environment(ctx: Context) -> dict[str, Any]:
    """The container environment, in a stable, readable order."""
    env: dict[str, Any] = {}
    for tunable in ctx.container_tunables():
        env[tunable.env] = Interp(interp(ctx.tunables, tunable.env))
    if ctx.drafter is not None:
        # SPEC=off is read at boot; unset stays empty, never a default that hides SPEC_N.
        env["SPEC"] = Interp("${SPEC:-}")
    # Passed through only where set (the entrypoint hands the key over and unsets both).
    env.update({"API_KEY": None, "API_KEY_FILE": None})
    for name, spec in {**ctx.engine.env, **ctx.profile.env}.items():
        env.setdefault(name, env_value(name, spec))
    return env


def _volumes(ctx: Context) -> list[dict[str, Any]]:
    engine = ctx.engine
    volumes = [
        {
            "type": "bind",
            "source": f"./{name}",
            "target": f"{SCRIPT_DIR}/{name}",
            "read_only": True,
        }
        for name in SCRIPT_FILES
    ]
    volumes += [
        {
            "type": "bind",
            "source": ctx.compose_value("MODEL_DIR", "./models"),
            "target": engine.model_mount,
            "read_only": engine.model_mount_readonly,
        }
    ]
    for patch in ctx.manifest.patches:
        bundled = f"./{patch.bundle_dir}"
        if patch.mount_file:
            bundled += f"/{patch.files[0].path}"
        volumes.append(
            {
                "type": "bind",
                "source": bundled,
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


def _service(ctx: Context) -> dict[str, Any]:
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
            "entrypoint": ["/bin/bash", "-p", f"{SCRIPT_DIR}/{ENTRYPOINT}"],
        }
    )
    return service


def render_helpers(envs: dict[str, SandboxedEnvironment]) -> bytes:
    """helpers.sh: the functions every entrypoint sources (the same for every profile)."""
    return envs["shell"].get_template("entrypoint/helpers.sh.j2").render().encode()


def _header(ctx: Context, envs: dict[str, SandboxedEnvironment]) -> RawYaml:
    text = envs["text"].get_template("compose/header.txt.j2").render(c=ctx, p=ctx.profile)
    return RawYaml(comment_lines(text.rstrip("\n")))


def entrypoint_script(
    ctx: Context, envs: dict[str, SandboxedEnvironment], command: EngineCommand
) -> str:
    """The boot script the service runs; a Kubernetes pod of one node runs the same."""
    template = envs["shell"].get_template(f"entrypoint/engines/{ctx.family.template}.sh.j2")
    return template.render(c=ctx, p=ctx.profile, cmd=command)


def render_profile(registry: Registry, profile: Profile) -> Rendered:
    """Renders one profile; pure: the registry in, bytes out."""
    envs = environments(tuple(template_dirs(registry.root)))
    ctx = Context(registry, profile)
    command = engine_command(ctx)
    script = entrypoint_script(ctx, envs, command)
    service = _service(ctx)
    compose = (
        envs["yaml"]
        .get_template("compose/compose.yaml.j2")
        .render(
            c=ctx,
            header=_header(ctx, envs),
            project=_project_name(profile.id),
            service_name=_project_name(profile.id),
            s=service,
            block=yaml_block,
        )
    )
    env_example = envs["text"].get_template("compose/env.example.j2").render(c=ctx, p=profile)
    manifest = ctx.manifest
    rendered = Rendered(
        profile_id=profile.id,
        compose=compose.encode(),
        manifest=manifest,
        manifest_json=manifest_bytes(manifest),
        env_example=env_example.encode(),
        service=service,
        command=command,
        entrypoint=script.encode(),
        helpers=render_helpers(envs),
    )
    verify_compose(profile.id, rendered.compose, service)
    return rendered
