"""Gateways: every route reaches an engine that serves the name it forwards, names and ports
are claimed once, and the names an engine is given are names it serves."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Severity
from ...families import family
from ...render.estate import PORTS_RULE, ROUTES_RULE, Estate, plan_estate
from .base import CheckContext, rule


def _estates(ctx: CheckContext) -> list[Estate]:
    return ctx.shared(_plan_estates)


def _plan_estates(ctx: CheckContext) -> list[Estate]:
    reg = ctx.registry
    return [plan_estate(reg, reg.gateways[g], registered=True) for g in sorted(reg.gateways)]


@rule(
    ROUTES_RULE,
    "a gateway routes only names its members' engines serve (or their gateway aliases), "
    "each name to one engine",
)
def routes(ctx: CheckContext) -> Iterator[Finding]:
    for estate in _estates(ctx):
        yield from (f for f in estate.findings if f.rule == ROUTES_RULE)


@rule(PORTS_RULE, "the members of a gateway on one host, and the gateway itself, listen apart")
def ports(ctx: CheckContext) -> Iterator[Finding]:
    for estate in _estates(ctx):
        yield from (f for f in estate.findings if f.rule == PORTS_RULE)


@rule("served-names", "every served name reaches the engine; a gateway alias adds a name")
def served(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        engine = reg.engines[p.engine]
        names = p.serve.served_names
        kin = family(engine.kind)
        if kin.served_names == "one" and len(names) > 1:
            flag = kin.served_name_flag
            yield ctx.report(
                ctx.at(p.id, "serve", "served_names", 1),
                f"{engine.kind} takes one served name ({flag} {names[0]}): "
                f"{', '.join(names[1:])} would never be served",
                hint="keep one served name; serve.gateway_aliases adds names at a gateway",
            )
        for j, alias in enumerate(p.serve.gateway_aliases):
            if alias in names:
                yield ctx.report(
                    ctx.at(p.id, "serve", "gateway_aliases", j),
                    f"gateway alias {alias!r} is already a served name of {p.id}",
                    hint="drop it from serve.gateway_aliases",
                    severity=Severity.WARNING,
                )
