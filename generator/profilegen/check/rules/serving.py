"""Serving: a server published beyond this machine asks for an API key."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ...errors import Finding, Location, Severity
from ...families import family, kinds
from .base import CheckContext, rule

SETTINGS = "registry/settings.yaml"
SHOWN = 3


@rule(
    "open-port",
    "profiles that publish their port on every interface require an API key (serving.api_key "
    "in registry/settings.yaml, or serve.api_key on the profile)",
    Severity.WARNING,
)
def open_port(ctx: CheckContext) -> Iterator[Finding]:
    registry = ctx.registry
    default = registry.settings.serving.api_key
    open_ids = [
        p.id
        for p in registry.concrete_profiles()
        if (ctx.focus is None or p.id in ctx.focus)
        and ipaddress.ip_address(p.bind_host).is_unspecified
        and (p.serve.api_key or default) != "required"
    ]
    if not open_ids:
        return
    named = ", ".join(open_ids[:SHOWN])
    if len(open_ids) > SHOWN:
        named += f" and {len(open_ids) - SHOWN} more"
    no_key = " and ".join(sorted(k for k in kinds() if family(k).api_key_via is None))
    set_here = ("settings", "settings") in registry.sources
    where = (
        registry.where("settings", "settings", ("serving", "api_key"))
        if set_here
        else Location(SETTINGS)
    )
    yield ctx.report(
        where,
        f"{len(open_ids)} profile(s) publish their port on every interface and serve anyone "
        f"who reaches it unless API_KEY is set: {named}",
        "set `serving: {api_key: required}` in registry/settings.yaml (a server then refuses "
        "to boot without API_KEY or API_KEY_FILE), or `serve.api_key: required` or "
        f"`bind_host: 127.0.0.1` on a profile; {no_key} takes no key safely, so bind it to "
        "127.0.0.1 behind the gateway",
    )


@rule(
    "api-key-engine",
    "a profile that requires an API key runs an engine that can take one off its command line",
)
def api_key_engine(ctx: CheckContext) -> Iterator[Finding]:
    registry = ctx.registry
    for p in registry.concrete_profiles():
        if ctx.focus is not None and p.id not in ctx.focus:
            continue
        kind = registry.engines[p.engine].kind
        if (p.serve.api_key or registry.settings.serving.api_key) == "required" and (
            family(kind).api_key_via is None
        ):
            yield ctx.report(
                ctx.at(p.id, "serve", "api_key"),
                f"{p.id}: requires an API key, but {kind} takes one only on its command line, "
                "where every process on the host can read it: it would never boot",
                "set `serve.api_key: optional` and `bind_host: 127.0.0.1`, and serve it through "
                "the gateway (LITELLM_MASTER_KEY)",
            )
