"""`profilegen verify --serving URL|PROFILE`: functional checks of a running server.

The server is identified first, as `bench` does (its served names and context against the
profile's); progress goes to stderr, one line a check to stdout; `--record` appends the run to
the profile's evidence (method `verify`), credentials never stored or printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..authoring.evidence import record_evidence
from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..measure.functional import Target, family_of
from ..measure.identity import Identity, shown_name
from ..measure.machine import read_machine
from ..measure.probes import Soak
from ..measure.record import record_rig
from ..measure.verifyrun import (
    Plan,
    VerifyResult,
    as_json,
    run_checks,
    verify_record,
)
from ..registry import Registry
from .bench import MAX_BY, MAX_TIMEOUT, connect, handle_option, is_local
from .common import Context

F = TypeVar("F", bound=Callable[..., Any])
SOAK = (8, 5)  # club-3090's quick soak: 8 sessions x 5 turns
SOAK_SECONDS = 900.0


def _soak(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[int, int]:
    found = re.fullmatch(r"\s*([0-9]{1,3})\s*x\s*([0-9]{1,3})\s*", value)
    if found is None or int(found[1]) < 1 or int(found[2]) < 1:
        raise click.BadParameter(f"takes CONVERSATIONSxTURNS such as 8x5 (each 1 to 999), "
                                 f"not {value!r}")  # fmt: skip
    return int(found[1]), int(found[2])


def serving_options(fn: F) -> F:
    options = [
        click.option("--serving", metavar="URL|PROFILE",
                     help="Check the running server at URL, or PROFILE's on this host."),
        click.option("--profile", "named", metavar="PROFILE",
                     help="With --serving URL: the profile it serves (else found by its names)."),
        click.option("--context", "context", type=click.IntRange(min=64), metavar="TOKENS",
                     help="The long-context probe's prompt length (default: 90% of the "
                     "server's context)."),
        click.option("--no-recall", is_flag=True,
                     help="Report the needle's recall without judging it (random weights)."),
        click.option("--soak", "soak", default=f"{SOAK[0]}x{SOAK[1]}", show_default=True,
                     callback=_soak, metavar="NxM",
                     help="The soak: N conversations at once, M turns each."),
        click.option("--soak-seconds", type=click.FloatRange(min=1, max=86400),
                     default=SOAK_SECONDS, show_default=True, help="The soak's bound in time."),
        click.option("--request-timeout", type=click.FloatRange(min=0, max=MAX_TIMEOUT, min_open=True),
                     default=300.0, show_default=True, metavar="SECONDS",
                     help="Limit for each request as a whole."),
        click.option("--record", is_flag=True,
                     help="With --serving: append the run to the profile's evidence."),
        click.option("--rig", help="With --record: the registry rig the server runs on "
                     "(default: this machine's cards' rig)."),
        click.option("--by", metavar="HANDLE", callback=handle_option,
                     help=f"With --record: who checked (at most {MAX_BY} characters)."),
    ]  # fmt: skip
    for option in reversed(options):
        fn = option(fn)
    return fn


def verify_serving(obj: Context, profile: str | None, fmt: str, opts: dict[str, Any]) -> int:
    registry = obj.registry()
    named = opts["named"] or profile
    endpoint, identity = connect(registry, opts["serving"], named, opts["request_timeout"], _say)
    if opts["record"] and identity.profile is None:
        raise UsageError("--record needs the profile the server is (name it, or --profile)")
    local = is_local(endpoint.url)
    machine, how = read_machine() if opts["record"] and local else (None, "not read")
    rig = record_rig(registry, machine, how, opts["rig"], local) if opts["record"] else None
    context = identity.server.context
    if context is None and identity.profile and not identity.profile.envelope.auto_context:
        context = identity.profile.envelope.max_model_len  # the server does not say its own
    target = Target(endpoint, identity.model, family_of(registry, identity.profile),
                    identity.profile, context)  # fmt: skip
    conversations, turns = opts["soak"]
    plan = Plan(opts["context"], not opts["no_recall"],
                Soak(conversations, turns, opts["soak_seconds"]))  # fmt: skip
    result = run_checks(target, identity, plan, _say)
    _report(result, identity, endpoint.url, fmt)
    if rig is not None:
        _record(registry, identity, result, endpoint.url, machine, rig, opts["by"])
    return EXIT_OK if result.ok else EXIT_FINDINGS


def _record(registry: Registry, identity: Identity, result: VerifyResult, url: str,
            machine: Any, rig: str, by: str | None) -> None:  # fmt: skip
    assert identity.profile is not None
    entry = verify_record(registry, identity, result, url, machine, rig=rig, by=by)
    rel = record_evidence(registry, identity.profile.id, entry)
    _say(f"recorded in {rel}; run `profilegen render --all` for the catalogue and its pages")


def _say(line: str) -> None:
    click.echo(f"verify: {line}", err=True)


def _report(result: VerifyResult, identity: Identity, url: str, fmt: str) -> None:
    name = identity.profile.id if identity.profile else "(no registry profile)"
    if fmt == "json":
        click.echo(json.dumps(as_json(result, name, url), indent=2))
        return
    click.echo(f"{name} at {url}, served as {shown_name(identity.model)}")
    for check in result.checks:
        click.echo(f"  {check.line()}")
    failed = [c.name for c in result.checks if c.status == "fail"]
    verdict = f"FAILED: {', '.join(failed)}" if failed else "all judged checks passed"
    click.echo(f"verify: {result.tally()} checks passed; {verdict}")
