"""Is the server answering the profile asked for? Its served names and context, from
`/v1/models` (vLLM, SGLang, llama-server) and `/props` (llama-server), against the profile's."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProfilegenError, UsageError
from ..hub.serving import Endpoint, EngineUnreachable
from ..hub.stream import MAX_TOKENS
from ..model import Profile
from ..registry import Registry
from ..render.context import served_names


class NotTheProfile(ProfilegenError):
    """The server answering is not the profile named: nothing is measured or recorded."""


@dataclass(frozen=True)
class Server:
    names: tuple[str, ...]
    # The context one request may use, as the server reports it (None: it does not say).
    context: int | None


@dataclass(frozen=True)
class Identity:
    profile: Profile | None
    model: str  # the name the bench asks for
    server: Server
    # What differs from the profile's envelope, as evidence settings (the server's context).
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def read_server(endpoint: Endpoint) -> Server:
    models = endpoint.get("/v1/models")
    if models is None or not isinstance(models.get("data"), list):
        raise EngineUnreachable(
            f"{endpoint.url} has no /v1/models list: not an OpenAI-compatible server"
        )
    entries = [m for m in models["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if not entries:
        raise EngineUnreachable(f"{endpoint.url}/v1/models lists no model")
    context = _int(entries[0].get("max_model_len"))  # vLLM and SGLang say it here
    if context is None:
        props = endpoint.get("/props")  # llama-server: each slot's context
        settings = (props or {}).get("default_generation_settings") or {}
        context = _int(settings.get("n_ctx")) or _int((props or {}).get("n_ctx"))
    return Server(tuple(str(m["id"]) for m in entries), context)


def identify(
    registry: Registry, profile: Profile | None, endpoint: Endpoint, server: Server | None = None
) -> Identity:
    """The profile's names must be among the server's (`server`: as already read); a context
    other than the profile's is kept as a setting of the record (the server was started with
    an override)."""
    server = server or read_server(endpoint)
    if profile is None:
        return Identity(None, server.names[0], server)
    expected = served_names(registry, profile)
    asked = next((n for n in expected if n in server.names), None)
    if asked is None:
        raise NotTheProfile(
            f"the server at {endpoint.url} serves {', '.join(shown_name(n) for n in server.names)}; "
            f"{profile.id} serves {', '.join(expected)}: it is not this profile "
            f"(another server on port {urllib.parse.urlsplit(endpoint.url).port}?)"
        )
    env = profile.envelope
    settings: dict[str, Any] = {}
    notes = [f"the server serves {asked}, as {profile.id} does"]
    if server.context is not None and not env.auto_context:
        if server.context != env.max_model_len:
            settings["max_model_len"] = server.context
            notes.append(
                f"its context is {server.context:,} tokens, not the profile's "
                f"{env.max_model_len:,}: recorded as a setting"
            )
        else:
            notes.append(f"its context is the profile's {server.context:,} tokens")
    return Identity(profile, asked, server, settings, tuple(notes))


def profile_of(registry: Registry, url: str, server: Server) -> Profile | None:
    """The one registry profile a bare URL serves (its names, then its port), if one fits."""
    port = urllib.parse.urlsplit(url).port
    fits = [
        p
        for p in registry.concrete_profiles()
        if set(served_names(registry, p)) & set(server.names)
    ]
    if len(fits) > 1:
        fits = [p for p in fits if p.port == port] or fits
    if len(fits) > 1:
        fits = [p for p in fits if p.status != "retired"] or fits
    if len(fits) == 1:
        return fits[0]
    if len(fits) > 1:
        raise UsageError(
            f"the server at {url} could be {', '.join(sorted(p.id for p in fits))}: "
            "name it with --profile"
        )
    return None


def shown_name(name: str) -> str:
    """A name the server chose, as it may be printed: no control character reaches a terminal
    or a CI log (a newline could forge a line of its own)."""
    text = "".join(c if c.isprintable() else "?" for c in name)
    return text if len(text) <= 80 else text[:77] + "..."


def _int(value: Any) -> int | None:
    """A context as the server says it: a whole number of tokens, none past MAX_TOKENS (a
    400-digit one is no context, and no float can hold it)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_TOKENS:
        return None
    return value
