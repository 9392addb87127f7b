"""Catalogue hygiene: ports, siblings, status and evidence, artifact kinds, engine flags."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Severity, suggest
from ...model import Profile
from ...model.runtime import FAMILY
from .base import CheckContext, rule

GGUF_ENGINES = {"llama.cpp"}


@rule(
    "port-clash",
    "profiles of different models on one host port cannot run at the same time",
    Severity.WARNING,
)
def ports(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    by_port: dict[int, list[str]] = {}
    for p in reg.concrete_profiles():
        if p.status != "retired":  # not served any more: its port is free for others
            by_port.setdefault(p.port, []).append(p.id)
    for port, ids in sorted(by_port.items()):
        models = {reg.profiles[i].model for i in ids}
        if len(models) < 2:
            continue
        for ident in ids:
            others = [o for o in ids if reg.profiles[o].model != reg.profiles[ident].model]
            yield ctx.finding(
                "port-clash",
                reg.where("profiles", ident, ("port",)),
                f"port {port} is also used by {', '.join(others)}, which serve another model: "
                "they cannot run at the same time",
                hint="pick a free port if both should run together (PORT overrides it at boot)",
            )


@rule("siblings", "siblings name existing profiles other than the profile itself")
def siblings(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        for i, sib in enumerate(p.siblings):
            where = reg.where("profiles", p.id, ("siblings", i))
            if sib == p.id:
                yield ctx.finding("siblings", where, f"{p.id} lists itself as a sibling")
            elif sib not in reg.profiles:
                close = suggest(sib, list(reg.profiles))
                yield ctx.finding(
                    "siblings",
                    where,
                    f"sibling {sib!r} is not a profile",
                    hint=f"did you mean {close!r}?" if close else None,
                )


@rule("status-evidence", "production profiles carry evidence; retired ones are not siblings")
def status(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        if p.status == "production" and not p.evidence:
            yield ctx.finding(
                "status-evidence",
                reg.where("profiles", p.id, ("status",)),
                f"{p.id} is production but carries no evidence record",
                hint="add an evidence entry (date, rig, source, measured) or lower the status",
            )
        for i, sib in enumerate(p.siblings):
            if (
                sib in reg.profiles
                and reg.profiles[sib].status == "retired"
                and p.status != "retired"
            ):
                yield ctx.finding(
                    "status-evidence",
                    reg.where("profiles", p.id, ("siblings", i)),
                    f"sibling {sib} is retired",
                    severity=Severity.WARNING,
                )


@rule("placeholder", "no TODO placeholder left from `profilegen new`")
def placeholders(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        texts: list[tuple[tuple[str | int, ...], str | None]] = [
            (("title",), p.title),
            (("best_for",), p.best_for),
        ]
        texts += [(("caveats", i), c) for i, c in enumerate(p.caveats)]
        for node, value in texts:
            if value and value.lstrip().upper().startswith("TODO"):
                yield ctx.finding(
                    "placeholder",
                    reg.where("profiles", p.id, node),
                    f"{node[0]} is still a TODO placeholder",
                    hint="say what the profile is before it is merged",
                )


@rule("artifact-kind", "weights are main artifacts in a format the engine loads")
def artifact_kind(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        engine = reg.engines[p.engine]
        model = reg.models[p.model]
        weights = model.artifacts[p.weights]
        if weights.kind != "main":
            yield ctx.finding(
                "artifact-kind",
                reg.where("profiles", p.id, ("weights",)),
                f"weights {p.weights} is a {weights.kind} artifact, not main weights",
            )
        gguf = weights.format == "gguf"
        if gguf != (engine.kind in GGUF_ENGINES):
            what = "a GGUF artifact" if gguf else f"{weights.format} weights"
            yield ctx.finding(
                "artifact-kind",
                reg.where("profiles", p.id, ("weights",)),
                f"{what} cannot be served by {engine.kind} ({engine.id})",
                hint="llama.cpp serves GGUF; vLLM and SGLang serve safetensors formats",
            )
        if p.mmproj and model.artifacts[p.mmproj].kind != "mmproj":
            yield ctx.finding(
                "artifact-kind",
                reg.where("profiles", p.id, ("mmproj",)),
                f"{p.mmproj} is not a vision projector (kind mmproj)",
            )
        if gguf and len(weights.files) != 1:
            yield ctx.finding(
                "artifact-kind",
                reg.where("models", model.id, ("artifacts", p.weights)),
                "a GGUF artifact must name exactly one file",
            )


@rule(
    "engine-flags",
    "every flag a profile passes is one its engine build lists, every runtime fact one its "
    "engine has",
)
def engine_flags(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        engine = reg.engines[p.engine]
        yield from _runtime_family(ctx, p, engine.kind)
        rendered = ctx.rendered.get(p.id)
        known = set(engine.flags)
        if rendered is None or not known:
            continue
        command = rendered.command
        respelled = set(p.spellings) | set(engine.spellings)
        for arg in (*command.args, *command.spec_args):
            flag = (arg.flag or "").split("=", 1)[0]
            # The family's own flags are the dialect's; a build must list the rest.
            if not (arg.fact in respelled or _build_specific(arg.fact)):
                continue
            if flag and flag not in known:
                yield ctx.finding(
                    "engine-flags",
                    reg.where("profiles", p.id, _fact_path(p, arg.fact)),
                    f"{engine.kind} ({engine.id}) has no flag {flag!r}",
                    hint="add it to the engine's flags if the image really has it",
                )


def _runtime_family(ctx: CheckContext, p: Profile, kind: str) -> Iterator[Finding]:
    for name in sorted(p.runtime.model_fields_set):
        family = FAMILY.get(name)
        if family is not None and family != kind:
            yield ctx.finding(
                "engine-flags",
                ctx.registry.where("profiles", p.id, ("runtime", name)),
                f"runtime.{name} is a {family} setting; engine {p.engine} is {kind}",
            )
    use = p.drafter
    if use is not None and kind != "llama.cpp":
        for name in ("gpu_layers", "device", "cross_ctx"):
            if getattr(use, name) is not None:
                yield ctx.finding(
                    "engine-flags",
                    ctx.registry.where("profiles", p.id, ("drafter", name)),
                    f"drafter.{name} is a llama.cpp setting; engine {p.engine} is {kind}",
                )


def _build_specific(fact: str) -> bool:
    """Facts whose flag only some builds have: runtime, draft placement, verbatim words."""
    return (
        fact == "extra"
        or fact.startswith(("draft_", "dry_", "kv_hadamard_"))
        or fact.removeprefix("draft_") in FAMILY
    )


def _fact_path(p: Profile, fact: str) -> tuple[str | int, ...]:
    """Where a rendered argument comes from in the profile, as near as the fact says."""
    if fact == "extra":
        return ("serve", "extra_args")
    if fact == "drafter":
        return ("drafter",)
    name = fact.removeprefix("draft_")
    if fact.startswith("draft_") and p.drafter is not None:
        return ("drafter", name)
    for section in ("runtime", "envelope", "serve"):
        if name in type(getattr(p, section)).model_fields:
            return (section, name)
    return ("engine",)
