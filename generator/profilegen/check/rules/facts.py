"""What each profile's engine receives, under every explain scenario, judged by the facts of
the engine's real release: flags, values, JSON keys and variables, at the line that set them."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Location, Severity
from ...explain.core import Explanation
from ...facts.engine import FAMILIES
from ...facts.judge import Problem, judge_argv, judge_env, server_words
from ...model import Profile
from ...registry import Registry
from ...render import Rendered
from .base import CheckContext, rule
from .catalogue import fact_path


@rule(
    "engine-facts-file",
    "every engine entry has a facts file from its real release, or says why it has none",
)
def facts_files(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    serving: dict[str, list[str]] = {}
    for p in reg.concrete_profiles():
        if p.status != "retired":
            serving.setdefault(p.engine, []).append(p.id)
    for engine_id in sorted(reg.engines):
        if engine_id in reg.facts:
            continue
        users = serving.get(engine_id, [])
        # Without its facts nothing its profiles pass is judged: a deleted file must not turn
        # every check of an engine in service into one quiet warning.
        many = f" and {len(users) - 3} more" if len(users) > 3 else ""
        yield ctx.report(
            reg.where("engines", engine_id, ("id",)),
            f"{engine_id} has no facts file: what its profiles pass is not checked against "
            "its release"
            + (f" ({len(users)} in service: {', '.join(users[:3])}{many})" if users else ""),
            hint=f"profilegen engine facts {engine_id} (or --none REASON)",
            severity=Severity.ERROR if users else Severity.WARNING,
        )
    for engine_id in sorted(set(reg.facts) - set(reg.engines)):
        yield ctx.report(
            reg.where("facts", engine_id),
            f"facts of {engine_id!r}, which is not an engine",
            hint="remove the file, or add the engine",
            severity=Severity.ERROR,
        )


@rule(
    "engine-facts",
    "under every explain scenario, the engine's argv and variables are ones its release "
    "accepts (flags, arity, choices, JSON keys; unknown engine variables warn)",
)
def engine_facts(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    judged = [
        p.id
        for p in reg.concrete_profiles()
        if p.id in ctx.rendered and (f := reg.facts.get(p.engine)) is not None and f.known
    ]
    for pid in judged:
        yield from _profile_findings(ctx, reg.profiles[pid], ctx.explained[pid])


def _profile_findings(ctx: CheckContext, p: Profile, runs: list[Explanation]) -> Iterator[Finding]:
    reg = ctx.registry
    facts = reg.facts[p.engine]
    prefixes = FAMILIES[reg.engines[p.engine].kind].ENV_PREFIXES
    found: dict[tuple[Location, str], tuple[Problem, list[str]]] = {}
    for run in runs:
        if not run.launched:
            continue
        label = run.scenario.label
        argv = server_words(ctx.rendered[p.id], run.argv)
        for problem in judge_argv(facts, argv) + judge_env(facts, prefixes, run.env):
            where = _locate(reg, p, ctx.rendered[p.id], argv, problem)
            key = (where, problem.message)
            found.setdefault(key, (problem, []))[1].append(label)
    for (where, message), (problem, labels) in found.items():
        when = "" if "defaults" in labels else f" (with {labels[0]})"
        yield ctx.report(
            where,
            f"{p.engine}: {message}{when}",
            hint=problem.hint,
            severity=problem.severity,
        )


def _locate(
    reg: Registry, p: Profile, rendered: Rendered, argv: tuple[str, ...], problem: Problem
) -> Location:
    """The registry line that produced the word: an extra_args item, the drafter, a fact, an
    environment entry; else the engine's file (what its entrypoint adds)."""
    if problem.index < 0:
        return _env_line(reg, p, problem.word)
    command = rendered.command
    spec = {(a.flag or "").split("=", 1)[0] for a in command.spec_args}
    word = problem.word.split("=", 1)[0]
    same = [
        a for a in (*command.args, *command.spec_args) if (a.flag or "").split("=", 1)[0] == word
    ]
    # The k-th time the word is passed comes from the k-th argument that passes it.
    nth = [w.split("=", 1)[0] for w in argv[: problem.index + 1]].count(word)
    arg = same[min(nth, len(same)) - 1] if same else None
    if arg is None:
        return reg.where("engines", p.engine, ("id",))
    if arg.fact == "extra":
        return _extra_line(reg, p, problem.word, problem.word in spec)
    if arg.fact == "drafter" and p.drafter is not None:
        if problem.key == "method":
            drafter = reg.drafters.get(p.drafter.id)
            if drafter is not None:
                return reg.where("drafters", drafter.id, ("method",))
        return reg.where("profiles", p.id, ("drafter",))
    if arg.fact == "compilation_config" and problem.key:
        return reg.where("profiles", p.id, ("envelope", "compilation", problem.key))
    return reg.where("profiles", p.id, fact_path(p, arg.fact))


def _extra_line(reg: Registry, p: Profile, word: str, drafting: bool) -> Location:
    if drafting and p.drafter is not None and word in p.drafter.extra_args:
        return reg.where(
            "profiles", p.id, ("drafter", "extra_args", p.drafter.extra_args.index(word))
        )
    words = p.serve.extra_args
    path: tuple[str | int, ...] = ("serve", "extra_args")
    return reg.where("profiles", p.id, (*path, words.index(word)) if word in words else path)


def _env_line(reg: Registry, p: Profile, name: str) -> Location:
    if name in p.env:
        return reg.where("profiles", p.id, ("env", name))
    engine = reg.engines[p.engine]
    if name in engine.env:
        return reg.where("engines", engine.id, ("env", name))
    tunable = next((i for i, t in enumerate(engine.tunables) if t.env == name), None)
    if tunable is not None:
        return reg.where("engines", engine.id, ("tunables", tunable, "env"))
    return reg.where("engines", engine.id, ("id",))
