"""`profilegen check`: every rule over the registry, one report, derived expectations.

Offline, the findings of an unchanged tree (registry/, schema/, templates/, compose/, docs/
and the lock, byte for byte, and profilegen itself) come from the result cache; the data
model, the renderer and the rules are imported only when something changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..cache import Inputs, Store
from ..errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    Finding,
    Location,
    ProfilegenError,
    RegistryError,
    Severity,
    merge_findings,
)
from ..registry import find_root
from .derived import drop_derived
from .report import format_findings, summary

if TYPE_CHECKING:
    from .changed import Change
    from .rules import CheckContext, Rule

CHECK_INPUTS = (
    "registry",
    "schema",
    "templates",
    "compose",
    "gateways",
    "k8s",
    "docs",
    "profilegen.lock.json",
)


@dataclass(frozen=True)
class CheckOptions:
    root: str | None
    fmt: str = "text"
    online: bool = False
    color: bool = False
    quiet: bool = False  # errors only
    timeout: float | None = None  # the --online deadline (None: environment or default)
    verbose: bool = False  # every warning on its own line
    strict: bool = False  # warnings fail too
    changed: str | None = None  # --changed: "" for the default base, else the revision


def collect(opts: CheckOptions) -> list[Finding]:
    """Runs the loader's checks, then every rule; a broken registry stops at the loader."""
    from ..registry import load_registry_cached

    root = find_root(explicit=opts.root)
    registry, sink = load_registry_cached(root)
    findings = [*sink.findings, *schema_findings(root)]
    if sink.errors:
        # Rules assume references resolve; report the loader's findings alone.
        return findings
    from .rules import CheckContext

    findings.extend(_errors_first(run_rules(CheckContext(registry, online=opts.online))))
    if opts.online:
        from ..hub.deadline import Deadline
        from ..hub.online import online_findings

        findings.extend(online_findings(registry, Deadline.start(opts.timeout)))
    return findings


def schema_findings(root: Path) -> list[Finding]:
    """The schema files the registry's modelines name: each stale one is a finding, and those
    not written yet are one (a registry that never ran `profilegen schema` has all ten)."""
    from ..generated.schemas import schema_drift, schema_names

    missing, stale = schema_drift(root / "schema")
    findings = [
        Finding(
            Location(f"schema/{name}"),
            f"schema/{name} is stale",
            "run `profilegen schema`",
            "schema-stale",
        )
        for name in stale
    ]
    if len(missing) == 1:
        where, what = f"schema/{missing[0]}", f"schema/{missing[0]} is missing"
    elif len(missing) == len(schema_names()):
        where, what = "schema/", f"schema/ is missing all {len(missing)} schema files"
    else:
        where = "schema/"
        what = f"schema/ is missing {len(missing)} schema files: {', '.join(missing)}"
    if missing:
        hint = f"run `profilegen schema` to write {'it' if len(missing) == 1 else 'them'}"
        findings.append(Finding(Location(where), what, hint, "schema-missing"))
    return findings


def rules_of_kind(kind: str) -> frozenset[str]:
    """The ids of the rules of one kind (`generated`: about compose/ and docs/, not the
    registry; `wording`: TODO placeholders, which fail `check` but leave a render sound)."""
    from .rules import load_rules

    return frozenset(r.id for r in load_rules() if r.kind == kind)


def stops_render(finding: Finding) -> bool:
    """An error that makes `render` refuse: any but those about the generated tree or wording."""
    return finding.severity is Severity.ERROR and finding.rule not in (
        rules_of_kind("generated") | rules_of_kind("wording")
    )


def _errors_first(findings: list[Finding]) -> list[Finding]:
    """While the registry has errors that stop `render`, the generated tree is stale by
    design, and saying so would bury the errors to fix first."""
    if any(stops_render(f) for f in findings):
        generated = rules_of_kind("generated")
        return [f for f in findings if f.rule not in generated]
    return findings


def run_rules(ctx: CheckContext, skip: frozenset[str] = frozenset()) -> list[Finding]:
    """Every registered rule but `skip`, over a loaded registry; a rule that cannot run says so.
    A finding that follows from a value another one reports is left out (check/derived.py).

    A rule that reads the explain runs before the boxes are done is run again after the
    others, which go on meanwhile; the findings keep the rules' order."""
    from .rules import RunsPending, load_rules

    rules = [rule for rule in load_rules() if rule.id not in skip]
    found: list[list[Finding] | None] = [None] * len(rules)
    ctx.ahead = True
    try:
        for i, rule in enumerate(rules):
            try:
                found[i] = _run_rule(ctx, rule)
            except RunsPending:
                continue
    finally:
        ctx.ahead = False
    findings: list[Finding] = []
    for rule, got in zip(rules, found, strict=True):
        findings.extend(_run_rule(ctx, rule) if got is None else got)
    return merge_findings(drop_derived(findings))


def _run_rule(ctx: CheckContext, rule: Rule) -> list[Finding]:
    findings: list[Finding] = []
    try:
        findings.extend(rule.fn(ctx))
    except RegistryError as exc:  # located already (a template refused): reported once
        findings.extend(exc.findings)
    except ProfilegenError as exc:
        findings.append(Finding(Location("registry"), str(exc), None, rule.id))
    return findings


def run_check(opts: CheckOptions) -> int:
    """The report on stdout, one summary line last (text); 1 when any finding is an error (or,
    with --strict, a warning of the change)."""
    from .present import arrange, render

    findings = merge_findings(_findings(opts))
    change = _change(opts) if opts.changed is not None else None
    errors = [f for f in findings if f.severity is Severity.ERROR]
    warnings = [f for f in findings if f.severity is not Severity.ERROR]
    if change is not None:
        warnings = [f for f in warnings if change.covers(f)]
    if opts.fmt == "json":
        click.echo(_json(errors if opts.quiet else findings, change))
    else:
        arranged = arrange(errors if opts.quiet else findings, verbose=opts.verbose, change=change)
        text = render(arranged, opts.fmt, change, color=opts.color)
        if text:
            click.echo(text)
        if opts.fmt == "text":
            hidden = len(findings) - len(errors) if opts.quiet else 0
            verdict = "check failed" if errors or (opts.strict and warnings) else "check passed"
            folded = (
                f"; {arranged.folded} warning(s) summarised: --verbose lists them"
                if arranged.folded
                else ""
            )
            scope = f"; changed since {change.base}: {len(change.files)} file(s)" if change else ""
            click.echo(f"{verdict}: {summary(findings, hidden)}{folded}{scope}")
    return EXIT_FINDINGS if errors or (opts.strict and warnings) else EXIT_OK


def _change(opts: CheckOptions) -> Change:
    from ..registry import load_registry_cached
    from .changed import change_of

    root = find_root(explicit=opts.root)
    registry, _sink = load_registry_cached(root)
    return change_of(registry, root, opts.changed or None)


def _json(findings: list[Finding], change: Change | None) -> str:
    data = json.loads(format_findings(findings, "json") if findings else "[]")
    if change is not None:
        for item, f in zip(data, _json_order(findings), strict=True):
            item["in_change"] = change.covers(f)
    return json.dumps(data, indent=2)


def _json_order(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.severity is not Severity.ERROR, f.sort_key()))


def _findings(opts: CheckOptions) -> list[Finding]:
    """Offline findings from the cache while no input changed; online ones always fresh."""
    if opts.online:
        return collect(opts)
    root = find_root(explicit=opts.root)
    return Store("check").remember(
        _inputs(root).key(),
        lambda: collect(opts),
        lambda hit: isinstance(hit, list) and all(isinstance(f, Finding) for f in hit),
    )


def _inputs(root: Path) -> Inputs:
    return Inputs(root, CHECK_INPUTS, ("check", str(root)))
