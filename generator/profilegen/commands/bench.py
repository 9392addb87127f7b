"""`profilegen bench URL|PROFILE [--record]`: the canonical bench against a serving engine.

The server is checked first (its served names and context against the profile's); progress
goes to stderr, the result to stdout; `--record` appends it to the profile's evidence with the
machine's facts (NVML, where present) and the digest of the engine command.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

import click

from ..authoring.evidence import record_evidence, recorded_as
from ..errors import EXIT_OK, UsageError
from ..hub.serving import Endpoint
from ..measure.identity import Identity, identify, profile_of, read_server, shown_name
from ..measure.machine import read_machine, used_mib
from ..measure.method import PREFILL_DEPTHS, PREFILL_RUNS, RUNS, WARMUPS, Method
from ..measure.record import evidence_record, record_rig, refuse_impossible, run_digest
from ..measure.run import BenchResult, run_bench
from ..registry import Registry, find_profile
from .common import Command, Context, format_option, pass_context


def _depths(text: str) -> tuple[int, ...]:
    if text.strip().lower() in ("none", "off", "0", ""):
        return ()
    try:
        depths = tuple(int(w) for w in text.split(","))
    except ValueError:
        raise UsageError(
            f"--prefill takes token counts such as 10000,90000 (or none), not {text!r}"
        ) from None
    if any(d <= 0 for d in depths):
        raise UsageError("--prefill depths must be positive token counts")
    return depths


MAX_BY = 64
# A request's limit, at most a day (a timer or a socket cannot wait past a few billion seconds).
MAX_TIMEOUT = 86400.0
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def handle_option(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """Who measured: a name or @handle on one line (it lands in the catalogue's pages)."""
    if value is None:
        return None
    if _CONTROL.search(value) or not value.strip():
        raise click.BadParameter("takes a name or @handle without control characters or newlines")
    if len(value) > MAX_BY:
        raise click.BadParameter(f"takes at most {MAX_BY} characters, not {len(value)}")
    return value.strip()


def is_local(url: str) -> bool:
    """Whether the server runs on this machine (a loopback address, or localhost)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("bench", cls=Command)
@click.argument("target")
@click.option(
    "--profile",
    "named",
    metavar="PROFILE",
    help="The profile a URL serves (else found by its served names).",
)
@click.option("--record", is_flag=True, help="Append the result to the profile's evidence.")
@click.option(
    "--rig",
    help="Registry rig to record: the machine's cards must be its cards (default: their rig; "
    "a server on another machine needs it).",
)
@click.option("--by", metavar="HANDLE", callback=handle_option,
              help=f"Who measured, as the record names them (@handle, at most {MAX_BY} characters).")  # fmt: skip
@click.option("--warmups", type=click.IntRange(min=0), default=WARMUPS, show_default=True)
@click.option("--runs", type=click.IntRange(min=1), default=RUNS, show_default=True)
@click.option("--prefill", default=",".join(str(d) for d in PREFILL_DEPTHS), show_default=True,
              help="Prompt lengths of the prefill probe, in tokens (none: no probe).")  # fmt: skip
@click.option("--prefill-runs", type=click.IntRange(min=1), default=PREFILL_RUNS, show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, max=MAX_TIMEOUT, min_open=True), default=300.0,
              show_default=True, metavar="SECONDS",
              help="Limit for each request as a whole: connecting and every byte of its answer.")  # fmt: skip
@format_option()
@pass_context
def command(
    obj: Context,
    target: str,
    named: str | None,
    record: bool,
    rig: str | None,
    by: str | None,
    warmups: int,
    runs: int,
    prefill: str,
    prefill_runs: int,
    timeout: float,
    fmt: str,
) -> int:
    """Bench the server at URL, or PROFILE's server on this host (its published port).

    Narrative and code prompts with pinned sampling, warm-ups then measured runs, mean wall
    tok/s and time to the first token, and a prefill probe. A server whose served names are
    not the profile's is refused before anything is measured. The API key, where the server
    needs one, is read from API_KEY.
    """
    registry = obj.registry()
    method = Method(warmups, runs, _depths(prefill), prefill_runs)
    endpoint, identity = connect(registry, target, named, timeout, _say)
    _measure(registry, endpoint, identity, method, fmt, record=record, rig=rig, by=by)
    return EXIT_OK


def connect(
    registry: Registry, target: str, named: str | None, timeout: float, say: Callable[[str], None]
) -> tuple[Endpoint, Identity]:
    """The server at TARGET (a URL, or a profile's published port on this host) and what it
    is: the profile named, else the one its served names say (bench and verify --serving)."""
    profile = find_profile(registry, named) if named else None
    if "://" in target:
        url = target
    else:
        profile = profile or find_profile(registry, target)
        url = f"http://127.0.0.1:{profile.port}"
    endpoint = Endpoint.parse(url, os.environ.get("API_KEY") or None, timeout)
    server = read_server(endpoint)  # once: which profile it is, then whether it is that one
    if profile is None:
        profile = profile_of(registry, endpoint.url, server)
    identity = identify(registry, profile, endpoint, server)
    unnamed = "no registry profile serves " + shown_name(identity.model)
    say(f"server at {endpoint.url}: {'; '.join(identity.notes) or unnamed}")
    return endpoint, identity


def _measure(
    registry: Registry,
    endpoint: Endpoint,
    identity: Identity,
    method: Method,
    fmt: str,
    *,
    record: bool,
    rig: str | None,
    by: str | None,
) -> None:
    """Runs the bench, reports it, and records it when asked."""
    local = is_local(endpoint.url)
    machine, how = read_machine() if local else (None, "the server is not on this machine")
    _say(f"machine: {machine.hardware() if machine else 'not recorded: ' + how}")
    if record:
        if identity.profile is None:
            raise UsageError("--record needs the profile the server is (name it, or --profile)")
        rig = record_rig(registry, machine, how, rig, local)
    peak: list[int] = []

    def sample() -> None:
        used = used_mib()
        if used is not None:
            peak.append(used)

    context = identity.server.context
    result = run_bench(endpoint, identity.model, method, context, _say, sample if machine else None)
    _report(result, identity, endpoint.url, fmt)
    if record and identity.profile is not None and rig is not None:
        _record(registry, identity, result, endpoint.url, machine, rig, by,
                max(peak) if peak else None)  # fmt: skip


def _record(registry: Registry, identity: Identity, result: BenchResult, url: str,
            machine: Any, rig: str, by: str | None, peak: int | None) -> None:  # fmt: skip
    assert identity.profile is not None
    entry = evidence_record(registry, identity, result, url, machine, rig=rig, by=by,
                            peak_mib=peak)  # fmt: skip
    refuse_impossible(registry, identity.profile, entry, result)
    seen = recorded_as(registry, f"run sha256 {run_digest(result, url)}")
    if seen is not None:
        _say(f"this run is already recorded as {seen[1]} in {seen[0]}: nothing changed")
        return
    rel = record_evidence(registry, identity.profile.id, entry)
    _say(f"recorded in {rel}; run `profilegen render --all` for the catalogue and its pages")


def _say(line: str) -> None:
    click.echo(f"bench: {line}", err=True)


def _report(result: BenchResult, identity: Identity, url: str, fmt: str) -> None:
    name = identity.profile.id if identity.profile else "(no registry profile)"
    if fmt == "json":
        click.echo(json.dumps(_json(result, name, url), indent=2))
        return
    click.echo(f"{name} at {url}, served as {shown_name(result.model)}")
    for p in result.prompts:
        decode = f"decode {p.decode_tps:7.2f}" if p.decode_tps is not None else "decode       -"
        click.echo(f"  {p.name:<10} wall {p.wall_tps:7.2f} tok/s  {decode}  TTFT {p.ttft_ms:6.0f} ms  "
                   f"CV {p.cv:5.1%}  ({len(p.runs)} runs)")  # fmt: skip
    for pp in result.prefill:
        click.echo(f"  prefill    {pp.prompt_tokens:,} prompt tokens: {pp.tokens_per_s:,.1f} tok/s")
    for why in result.skipped:
        click.echo(f"  skipped    {why}")
    click.echo(f"method: {result.method.describe()}")


def _json(result: BenchResult, name: str, url: str) -> dict[str, Any]:
    return {
        "profile": name,
        "url": url,
        "model": result.model,
        "canonical": result.method.canonical,
        "prompts": {
            p.name: {
                "wall_tps": p.wall_tps,
                "decode_tps": p.decode_tps,
                "ttft_ms": p.ttft_ms,
                "cv": p.cv,
                "runs": len(p.runs),
            }  # fmt: skip
            for p in result.prompts
        },
        "prefill": [
            {"prompt_tokens": p.prompt_tokens, "tokens_per_s": p.tokens_per_s}
            for p in result.prefill
        ],
        "skipped": result.skipped,
    }
