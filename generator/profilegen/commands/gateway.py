"""`profilegen gateway`: one OpenAI-compatible endpoint (LiteLLM, optionally Open WebUI) in
front of a registry gateway's members or the named profiles."""

from __future__ import annotations

from pathlib import Path

import click
from pydantic import ValidationError

from ..errors import EXIT_OK, UsageError
from ..fit.rigs import find_registry_rig
from ..model import Gateway
from ..registry import Registry, find_profile
from ..render.estate import adhoc_gateway, plan_estate
from ..render.output import Owner, write_output
from ..render.targets.gateway import render_gateway
from .common import (
    Command,
    Context,
    echo_json,
    files_json,
    format_option,
    output_options,
    pass_context,
)


def _with_host(gateway: Gateway, engine_host: str | None) -> Gateway:
    if engine_host is None:
        return gateway
    try:
        return Gateway.model_validate({**gateway.model_dump(), "engine_host": engine_host})
    except ValidationError:
        raise UsageError(f"--engine-host {engine_host!r} is not a host name or address") from None


def _rig_profiles(registry: Registry, rig: str, named: list[str]) -> list[str]:
    rig = find_registry_rig(registry, rig).id  # 2x3090 as every command reads it
    for ident in named:
        other = registry.profiles[ident].rig
        if other != rig:
            raise UsageError(f"profile {ident!r} runs on {other}, not {rig}")
    if named:
        return named
    chosen = [p.id for p in registry.concrete_profiles() if p.rig == rig and p.status != "retired"]
    if not chosen:
        raise UsageError(f"rig {rig!r} has no profile that is not retired")
    return chosen


def choose(
    registry: Registry, names: tuple[str, ...], rig: str | None, webui: bool
) -> tuple[Gateway, bool]:
    """The gateway the command line names: (gateway, whether it is a registry file)."""
    gateways = [n for n in names if n in registry.gateways]
    if gateways:
        if len(names) > 1 or rig or webui:
            raise UsageError(
                f"gateway {gateways[0]!r} names its own members and Open WebUI; give it alone"
            )
        return registry.gateways[gateways[0]], True
    if not names and not rig:
        raise UsageError("name a gateway (registry/gateways/), PROFILEs or --rig RIG")
    named = list(dict.fromkeys(find_profile(registry, n).id for n in names))
    if rig:
        named = _rig_profiles(registry, rig, named)
    ident = f"gateway-{rig}" if rig else "gateway"
    title = f"{len(named)} profiles" + (f" of {rig}" if rig else "") + ": " + ", ".join(named)
    return adhoc_gateway(ident, title[:4000], named, webui), False


@click.command("gateway", cls=Command, exit_1="a member cannot be routed (nothing is written)")
@click.argument("names", nargs=-1, metavar="[GATEWAY | PROFILE...]")
@click.option("--rig", help="The profiles of RIG (every one not retired, or the PROFILEs named).")
@click.option("--webui", is_flag=True, help="Add Open WebUI, connected to the gateway.")
@click.option(
    "--engine-host",
    metavar="HOST",
    help="How the proxy reaches the engines' host ports (default host.docker.internal; "
    "127.0.0.1 for a proxy run on the host itself).",
)
@output_options(
    "Write compose.yaml, config.yaml and .env.example here (else config.yaml to stdout)."
)
@format_option()
@pass_context
def command(
    obj: Context,
    names: tuple[str, ...],
    rig: str | None,
    webui: bool,
    engine_host: str | None,
    output: Path | None,
    force: bool,
    fmt: str,
) -> int:
    """A LiteLLM gateway (and Open WebUI) for a registry gateway or the named profiles.

    With --format json the result is one document: the gateway, its routes, and the files
    printed (config.yaml, with its text) or written (with their sizes and sha256).
    """
    registry = obj.registry()
    gateway, registered = choose(registry, names, rig, webui)
    estate = plan_estate(registry, _with_host(gateway, engine_host), registered)
    rendered = render_gateway(registry, estate)  # located findings (exit 1) before any write
    routes = [{"name": r.name, "profile": r.profile, "api_base": r.api_base} for r in estate.routes]
    doc = {"gateway": gateway.id, "routes": routes}
    if output is None:
        if fmt == "json":
            echo_json({**doc, "files": files_json({"config.yaml": rendered.config}, content=True)})
        else:
            click.echo(rendered.config.decode(), nl=False)
        return EXIT_OK
    files = rendered.files()
    write_output(obj.root, output, Owner("gateway", gateway.id), files, force=force)
    if fmt == "json":
        echo_json({**doc, "output": str(output), "files": files_json(files)})
        return EXIT_OK
    click.echo(
        f"wrote {output}/ ({len(files)} files, {len(estate.routes)} routes): "
        f"docker compose -f {output / 'compose.yaml'} up",
        err=True,
    )
    return EXIT_OK
