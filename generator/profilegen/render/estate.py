"""A gateway's estate: which engine answers each public name, where, and what clashes (pure).

Every route comes from the profile data the engines are rendered from: a profile's served
names (exactly what its engine command passes, `served_names`) and its gateway aliases (extra
names forwarded to its first served name). A gateway may narrow a member to some of those names
(`routes`); it can never add one its engine does not answer to.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import Finding, Location, Severity, Value
from ..families import family
from ..model import Gateway, Profile
from ..model.gateway import GatewayMember, WebUi
from ..registry import Registry
from .context import served_names

ROUTES_RULE = "gateway-routes"
PORTS_RULE = "gateway-ports"
DOCKER_HOST = "host.docker.internal"


@dataclass(frozen=True)
class Route:
    name: str  # what a client asks the gateway for
    served: str  # what the engine is sent: a name it serves
    profile: str
    host: str
    port: int

    @property
    def api_base(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


@dataclass(frozen=True)
class Estate:
    gateway: Gateway
    # The gateway's registry file (registry/gateways/<id>.yaml), or None for one made up
    # from profiles on the command line.
    registered: bool
    routes: tuple[Route, ...]
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]


def adhoc_gateway(
    ident: str, title: str, profiles: list[str], webui: bool, engine_host: str | None = None
) -> Gateway:
    """A gateway over the named profiles, as `profilegen gateway PROFILE...` builds it."""
    data: dict[str, object] = {
        "id": ident,
        "title": title,
        "members": [GatewayMember(profile=p) for p in profiles],
        "webui": WebUi() if webui else None,
    }
    if engine_host is not None:
        data["engine_host"] = engine_host
    return Gateway.model_validate(data, strict=False)


class _Locate:
    """Where a finding about member i goes: its line in the gateway file, or (for a gateway
    made up on the command line) the line of the profile value it is about."""

    def __init__(self, registry: Registry, gateway: Gateway, registered: bool) -> None:
        self.registry = registry
        self.gateway = gateway
        self.registered = registered

    def __call__(
        self, i: int, gateway_node: tuple[str | int, ...], profile_node: tuple[str | int, ...]
    ) -> Location:
        if self.registered:
            return self.registry.where("gateways", self.gateway.id, ("members", i, *gateway_node))
        profile = self.gateway.members[i].profile
        return self.registry.where("profiles", profile, profile_node)

    def profile(self, ident: str, *node: str | int) -> Location:
        return self.registry.where("profiles", ident, node)

    def gateway_at(self, *node: str | int) -> Location:
        return self.registry.where("gateways", self.gateway.id, node)


def _offered(registry: Registry, profile: Profile) -> dict[str, str]:
    """Every name the gateway may route to this profile -> the name its engine is sent."""
    served = served_names(registry, profile)
    offered = {name: name for name in served}
    for alias in profile.serve.gateway_aliases:
        offered.setdefault(alias, served[0])
    return offered


def _name_node(profile: Profile, name: str) -> tuple[str | int, ...]:
    """Where a profile declares a name (for a located finding)."""
    if name in profile.serve.gateway_aliases:
        return ("serve", "gateway_aliases", profile.serve.gateway_aliases.index(name))
    if name in profile.serve.served_names:
        return ("serve", "served_names", profile.serve.served_names.index(name))
    return ("serve",)


def _few(items: list[str], shown: int = 3) -> str:
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")


def _list(names: list[str]) -> str:
    return ", ".join(names) if names else "nothing"


class _Planner:
    def __init__(self, registry: Registry, gateway: Gateway, registered: bool) -> None:
        self.registry = registry
        self.gateway = gateway
        self.at = _Locate(registry, gateway, registered)
        self.findings: list[Finding] = []
        self.routes: list[Route] = []
        # Public name -> the members (index, profile) that claim it.
        self.claims: dict[str, list[tuple[int, str]]] = {}

    def add(
        self,
        rule: str,
        where: Location,
        message: str,
        hint: str | None = None,
        about: Value | None = None,
    ) -> None:
        self.findings.append(Finding(where, message, hint, rule, Severity.ERROR, about=about))

    def members(self) -> Iterator[tuple[int, GatewayMember, Profile]]:
        seen: dict[str, int] = {}
        for i, member in enumerate(self.gateway.members):
            profile = self.registry.profiles.get(member.profile)
            if profile is None:
                continue  # the loader's reference finding says why
            if member.profile in seen:
                self.add(
                    ROUTES_RULE,
                    self.at(i, ("profile",), ()),
                    f"{member.profile} is a member twice (also members[{seen[member.profile]}])",
                    hint="list each profile once; `routes` picks the names it answers to",
                )
                continue
            seen[member.profile] = i
            # A registry gateway routes to what is served; profiles named on the command line
            # are the user's own choice, retired or not.
            if profile.status == "retired" and self.at.registered:
                self.add(
                    ROUTES_RULE,
                    self.at(i, ("profile",), ()),
                    f"{member.profile} is retired: the gateway would route to a server that is "
                    "no longer served",
                    hint="take it out of the gateway, or give the profile another status",
                )
                continue
            yield i, member, profile

    def member_routes(self, i: int, member: GatewayMember, profile: Profile) -> None:
        engine = self.registry.engines[profile.engine]
        kin = family(engine.kind)
        if kin.default_served == "weights-path" and not profile.serve.served_names:
            self.add(
                ROUTES_RULE,
                self.at(i, ("profile",), ("serve",)),
                f"{profile.id} has no served name: {kin.server or kin.label} answers to the path of its "
                "weights file, and a gateway routes names",
                hint=f"give the profile serve.served_names (its {kin.served_name_flag})",
            )
            return
        offered = _offered(self.registry, profile)
        chosen = list(offered) if member.routes is None else list(member.routes)
        for j, name in enumerate(chosen):
            if name not in offered:
                served = served_names(self.registry, profile)
                self.add(
                    ROUTES_RULE,
                    self.at(i, ("routes", j), ()),
                    f"route {name!r}: {profile.id} ({engine.id}) serves "
                    f"{_list(served)} and has the gateway aliases "
                    f"{_list(list(profile.serve.gateway_aliases))}; it does not answer to {name!r}",
                    hint=f"name one it serves, or add {name!r} to its serve.gateway_aliases",
                )
                continue
            self.claims.setdefault(name, []).append((i, profile.id))
            host = member.host or self.gateway.engine_host
            self.routes.append(Route(name, offered[name], profile.id, host, profile.port))

    def name_clashes(self) -> None:
        for name, owners in sorted(self.claims.items()):
            if len(owners) < 2:
                continue
            for i, ident in owners:
                profile = self.registry.profiles[ident]
                member = self.gateway.members[i]
                others = [
                    f"{o} ({self.at.profile(o, *_name_node(self.registry.profiles[o], name))})"
                    for _, o in owners
                    if o != ident
                ]
                what = "gateway alias" if name in profile.serve.gateway_aliases else "name"
                node = ("routes", member.routes.index(name)) if member.routes else ("profile",)
                self.add(
                    ROUTES_RULE,
                    self.at(i, node, _name_node(profile, name)),
                    f"{what} {name!r} of {ident} is also claimed by {_few(others)}: "
                    "one name routes to one engine",
                    hint="keep it on one member (its `routes` narrow a member to some names)"
                    if self.at.registered
                    else "leave all but one out, or list them in a registry gateway "
                    "(registry/gateways/) whose `routes` narrow a member to some names",
                )

    def port_clashes(self, members: list[tuple[int, GatewayMember, Profile]]) -> None:
        own = self.gateway.engine_host
        listeners: dict[tuple[str, int], list[str]] = {}
        listeners.setdefault((own, self.gateway.port), []).append("the gateway itself")
        if self.gateway.webui is not None:
            listeners.setdefault((own, self.gateway.webui.port), []).append("its Open WebUI")
        for _, member, profile in members:
            listeners.setdefault((member.host or own, profile.port), []).append(profile.id)
        for i, member, profile in members:
            host = member.host or own
            others = [o for o in listeners[(host, profile.port)] if o != profile.id]
            if not others:
                continue
            named = [
                f"{o} ({self.at.profile(o, 'port')})" if o in self.registry.profiles else o
                for o in others
            ]
            self.add(
                PORTS_RULE,
                self.at(i, ("profile",), ("port",)),
                f"port {profile.port} of {profile.id} on {host} is also the port of "
                f"{_few(named)}: they cannot all listen",
                hint="give one of them another port, or leave one out of the gateway",
                # The port is reported here, as a gateway's: `check`'s port-clash says no more.
                about=Value.of_profile(profile.id, "port"),
            )
        webui = self.gateway.webui
        if webui is not None and webui.port == self.gateway.port and self.at.registered:
            self.add(
                PORTS_RULE,
                self.at.gateway_at("webui", "port"),
                f"Open WebUI's port {webui.port} is the gateway's own port",
                hint="give it another port",
            )


def plan_estate(registry: Registry, gateway: Gateway, registered: bool) -> Estate:
    """The routes of a gateway and every problem with them, each located."""
    planner = _Planner(registry, gateway, registered)
    members = list(planner.members())
    for i, member, profile in members:
        planner.member_routes(i, member, profile)
    planner.name_clashes()
    planner.port_clashes(members)
    return Estate(gateway, registered, tuple(planner.routes), tuple(planner.findings))
