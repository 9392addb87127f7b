"""Catalogue hygiene: ports and alternatives, siblings, status and evidence, artifact kinds,
engine flags."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Severity, suggest
from ...families import family, kinds
from ...model import Profile
from ...model.runtime import option_family
from .base import CheckContext, rule


@rule(
    "port-clash",
    "profiles of different models share a host port only where they are alternatives "
    "(never served at the same time)",
)
def ports(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    by_port: dict[int, list[Profile]] = {}
    for p in reg.concrete_profiles():
        if p.status != "retired":  # not served any more: its port is free for others
            by_port.setdefault(p.port, []).append(p)
    for port, sharing in sorted(by_port.items()):
        # Variants of one model's server share its port by design: one runs at a time.
        for p in sharing:
            others = [o.id for o in sharing if o.model != p.model and not _alternatives(p, o)]
            if others:
                yield ctx.report(
                    ctx.at(p.id, "port"),
                    f"port {port} is also used by {', '.join(others)}, which serve another "
                    "model: they cannot run at the same time",
                    hint="if they may run together, give one a free port; if they never do, "
                    "list them in `alternatives`",
                    # A gateway serving both reports the port (gateway-ports), and says more.
                    follows=[ctx.at(p.id, "port")],
                )


def _alternatives(a: Profile, b: Profile) -> bool:
    """Whether either profile says the two are never served at the same time."""
    return b.id in a.alternatives or a.id in b.alternatives


@rule("alternatives", "alternatives name existing profiles other than the profile itself")
def alternatives(ctx: CheckContext) -> Iterator[Finding]:
    for p in ctx.registry.concrete_profiles():
        yield from _other_profiles(ctx, p, "alternatives", "an alternative")


@rule("siblings", "siblings name existing profiles other than the profile itself")
def siblings(ctx: CheckContext) -> Iterator[Finding]:
    for p in ctx.registry.concrete_profiles():
        yield from _other_profiles(ctx, p, "siblings", "a sibling")


def _other_profiles(ctx: CheckContext, p: Profile, key: str, one: str) -> Iterator[Finding]:
    """Each profile a list of `p` names (`one` of them: "a sibling") is another profile."""
    reg = ctx.registry
    for i, other in enumerate(getattr(p, key)):
        where = ctx.at(p.id, key, i)
        if other == p.id:
            yield ctx.report(where, f"{p.id} lists itself as {one}")
        elif other not in reg.profiles:
            close = suggest(other, list(reg.profiles))
            yield ctx.report(
                where,
                f"{one.split()[-1]} {other!r} is not a profile",
                hint=f"did you mean {close!r}?" if close else None,
            )


@rule("status-evidence", "production profiles carry evidence; retired ones are not siblings")
def status(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        if p.status == "production" and not p.evidence:
            yield ctx.report(
                ctx.at(p.id, "status"),
                f"{p.id} is production but carries no evidence record",
                hint="add an evidence entry (date, rig, source, measured) or lower the status",
            )
        for i, sib in enumerate(p.siblings):
            if (
                sib in reg.profiles
                and reg.profiles[sib].status == "retired"
                and p.status != "retired"
            ):
                yield ctx.report(
                    ctx.at(p.id, "siblings", i),
                    f"sibling {sib} is retired",
                    severity=Severity.WARNING,
                )


@rule("placeholder", "no TODO placeholder left from `profilegen new`", kind="wording")
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
                yield ctx.report(
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
            yield ctx.report(
                ctx.at(p.id, "weights"),
                f"weights {p.weights} is a {weights.kind} artifact, not main weights",
            )
        gguf = weights.format == "gguf"
        if gguf != (family(engine.kind).weights_format == "gguf"):
            what = "a GGUF artifact" if gguf else f"{weights.format} weights"
            yield ctx.report(
                ctx.at(p.id, "weights"),
                f"{what} cannot be served by {engine.kind} ({engine.id})",
                hint="llama.cpp serves GGUF; vLLM and SGLang serve safetensors formats",
            )
        if p.mmproj and model.artifacts[p.mmproj].kind != "mmproj":
            yield ctx.report(
                ctx.at(p.id, "mmproj"),
                f"{p.mmproj} is not a vision projector (kind mmproj)",
            )
        if gguf and len(weights.files) != 1:
            yield ctx.report(
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
        # An engine with facts from its release is judged by them (rule engine-facts).
        facts = reg.facts.get(p.engine)
        if rendered is None or not known or (facts is not None and facts.known):
            continue
        command = rendered.command
        respelled = set(p.spellings) | set(engine.spellings)
        for arg in (*command.args, *command.spec_args):
            flag = (arg.flag or "").split("=", 1)[0]
            # The family's own flags are the dialect's; a build must list the rest.
            if not (arg.fact in respelled or _build_specific(arg.fact)):
                continue
            if flag and flag not in known:
                yield ctx.report(
                    ctx.at(p.id, *fact_path(p, arg.fact)),
                    f"{engine.kind} ({engine.id}) has no flag {flag!r}",
                    hint="add it to the engine's flags if the image really has it",
                )


def _runtime_family(ctx: CheckContext, p: Profile, kind: str) -> Iterator[Finding]:
    for name in sorted(p.runtime.model_fields_set):
        owner = option_family(name)
        if owner is not None and owner != kind:
            yield ctx.report(
                ctx.at(p.id, "runtime", name),
                f"runtime.{name} is a {owner} setting; engine {p.engine} is {kind}",
            )
    use = p.drafter
    if use is None:
        return
    for name in sorted(n for k in kinds() for n in family(k).drafter_options):
        owner = next(k for k in kinds() if name in family(k).drafter_options)
        if owner != kind and getattr(use, name) is not None:
            yield ctx.report(
                ctx.at(p.id, "drafter", name),
                f"drafter.{name} is a {owner} setting; engine {p.engine} is {kind}",
            )


def _build_specific(fact: str) -> bool:
    """Facts whose flag only some builds have: runtime, draft placement, verbatim words."""
    return (
        fact == "extra"
        or fact.startswith(("draft_", "dry_", "kv_hadamard_"))
        or option_family(fact.removeprefix("draft_")) is not None
    )


def fact_path(p: Profile, fact: str) -> tuple[str | int, ...]:
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


@rule(
    "advice",
    "live profiles say what they are best for and which known engine bugs they run into, "
    "each with where it was read",
    severity=Severity.WARNING,
    kind="wording",
)
def advice(ctx: CheckContext) -> Iterator[Finding]:
    for p in ctx.registry.concrete_profiles():
        if p.status == "retired":
            continue
        if not p.best_for:
            yield ctx.report(
                ctx.at(p.id, "id"),
                f"{p.id} does not say what it is best for",
                hint="add best_for (a use, in a few words) and best_for_source "
                "({file, line, rev}: where it was read)",
            )
        elif p.best_for_source is None:
            yield ctx.report(
                ctx.at(p.id, "best_for"),
                "best_for does not say where it was read",
                hint="add best_for_source: {file, line, rev} (rev: the upstream revision; "
                "none for a file of this repository)",
            )
        if p.exposures is None:
            yield ctx.report(
                ctx.at(p.id, "id"),
                f"{p.id} does not state its known exposures (engine bugs it runs into)",
                hint="add exposures: [{issue, effect, mitigation, source}], or `exposures: []` "
                "with exposures_source naming the file that states none",
            )
        elif not p.exposures and p.exposures_source is None:
            yield ctx.report(
                ctx.at(p.id, "exposures"),
                "exposures is empty but no exposures_source says none are known",
                hint="add exposures_source: {file, line, rev}",
            )
