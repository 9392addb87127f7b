"""A bench result as an evidence record that names the server measured: the digest of the
engine command the profile runs, the machine as NVML saw it, the settings that differed, the
run's own digest (a run is recorded once), and only figures its rig can physically reach."""

from __future__ import annotations

import datetime
import hashlib
import json
from typing import Any

from pydantic import ValidationError

from ..errors import EXIT_FINDINGS, ProfilegenError, UsageError
from ..explain.core import Scenario, explain
from ..fit.predict import read_lock_or_none
from ..fit.rigs import find_registry_rig
from ..fit.speed import MARGIN, impossible_figures
from ..hub.serving import redact_url
from ..model import Profile
from ..model.evidence import Evidence
from ..registry import Registry
from .identity import Identity
from .machine import Machine
from .run import BenchResult


class ImpossibleFigure(ProfilegenError):
    """A measured speed past what the rig can physically do: nothing is recorded."""

    exit_code = EXIT_FINDINGS


def engine_command_digest(registry: Registry, profile: Profile) -> str | None:
    """sha256 of the engine's executable and arguments as the container runs them at the
    profile's defaults (what `explain PROFILE` shows); None where the container refuses."""
    run = explain(registry, profile, Scenario())
    if run.exe is None:
        return None
    words = "\0".join((run.exe, *run.argv))
    return hashlib.sha256(words.encode()).hexdigest()


def run_digest(result: BenchResult, url: str) -> str:
    """What identifies one bench run: the server, the method and every timing it measured."""
    runs = [
        [p.name, [[r.wall_s, r.ttft_s, r.completion_tokens, r.prompt_tokens] for r in p.runs]]
        for p in result.prompts
    ]
    prefill = [[p.depth, p.prompt_tokens, p.tokens_per_s] for p in result.prefill]
    text = json.dumps([url, result.model, result.method.describe(), runs, prefill])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _card_ids(registry: Registry, rig_id: str) -> list[str]:
    rig = registry.rigs[rig_id]
    return sorted(rig.cards or [rig.gpu] * rig.count)


def record_rig(
    registry: Registry, machine: Machine | None, how: str, rig: str | None, local: bool
) -> str:
    """The rig the run was measured on: the machine's cards where the server runs here (a
    --rig must name the same cards), else the rig --rig names. Never the profile's rig
    by default: a record of the wrong rig is worse than none."""
    named = find_registry_rig(registry, rig).id if rig is not None else None
    if not local:
        if named is None:
            raise UsageError(
                "the server is not on this machine, whose cards say nothing of its rig: name "
                "the rig it runs on with --rig"
            )
        return named
    if machine is None:
        if named is None:
            raise UsageError(
                f"no GPU was read on this machine ({how}): name the rig the server runs on "
                "with --rig"
            )
        return named
    seen = machine.registry_rig(registry)
    cards = f"{len(machine.cards)}x {' + '.join(dict.fromkeys(c.name for c in machine.cards))}"
    if named is not None:
        if seen is not None and _card_ids(registry, seen) != _card_ids(registry, named):
            raise UsageError(
                f"--rig {named} is not this machine's cards ({cards}, rig {seen}): the server "
                "on this machine runs on its cards"
            )
        return named
    if seen is None:
        raise UsageError(
            f"this machine's cards ({cards}) are no registry rig's: add the rig under "
            "registry/rigs/ to record a run on it"
        )
    return seen


def evidence_record(
    registry: Registry,
    identity: Identity,
    result: BenchResult,
    url: str,
    machine: Machine | None,
    *,
    rig: str,
    by: str | None,
    peak_mib: int | None,
) -> dict[str, Any]:
    url = redact_url(url)  # a credential is never stored
    source = (
        f"profilegen bench {url}: {result.method.describe()}; run sha256 {run_digest(result, url)}"
    )
    return evidence_entry(registry, identity, machine, method="bench", rig=rig, by=by,
                          source=source, summary=_summary(identity, result),
                          figures=measured(result, peak_mib))  # fmt: skip


def evidence_entry(
    registry: Registry, identity: Identity, machine: Machine | None, *, method: str, rig: str,
    by: str | None, source: str, summary: str, figures: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """An evidence record of a run against the server (bench's, verify's), its fields in the
    order the evidence files keep: what ran, where and by whom, then what it found."""
    profile = identity.profile
    if profile is None:
        raise UsageError("--record needs the profile the server is (name it, or --profile)")
    today = datetime.date.today().isoformat()
    record: dict[str, Any] = {
        "key": f"{method}-{profile.id}-{today}"[:80],
        "date": today,
        "rig": rig,
        "method": method,
    }
    if by:
        record["contributor"] = by
    if machine is not None:
        record["hardware"] = machine.hardware()
    record["source"] = source
    digest = engine_command_digest(registry, profile)
    if digest:
        record["engine_command"] = digest
    record["summary"] = summary
    if identity.settings:
        record["settings"] = dict(identity.settings)
    record["measured"] = figures
    return record


def refuse_impossible(registry: Registry, profile: Profile, record: dict[str, Any],
                      result: BenchResult) -> None:  # fmt: skip
    """Refuses a record with a figure past the physical bound of its rig (exit 1)."""
    try:
        ev = Evidence.model_validate(record)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(x) for x in problem["loc"])
        raise ImpossibleFigure(f"not recorded: {where}: {problem['msg']}") from None
    counted = [r.prompt_tokens or 0 for p in result.prompts for r in p.runs]
    context = min(counted) if counted else 0  # the least KV a weight pass read
    past = impossible_figures(registry, profile, ev, read_lock_or_none(registry), context)
    if past:
        lines = "; ".join(p.message() for p in past)
        raise ImpossibleFigure(
            f"not recorded: {lines}. No {ev.rig} can serve {profile.id} this fast (the bound "
            f"is the ideal times a {MARGIN:g}x margin, docs/EVIDENCE.md): the server measured "
            "is not this profile on this rig, or does not generate what it streams"
        )


def measured(result: BenchResult, peak_mib: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    by_name = {p.name: p for p in result.prompts}
    for name in ("narrative", "code"):
        if name in by_name:
            out[f"decode_tps_{name}"] = round(by_name[name].wall_tps, 2)
    ttft = [round(by_name[n].ttft_ms, 1) for n in ("narrative", "code") if n in by_name]
    if ttft:
        out["ttft_ms"] = ttft
    if result.prefill:
        out["prefill"] = [
            {"context_tokens": p.prompt_tokens, "tokens_per_s": round(p.tokens_per_s, 1)}
            for p in result.prefill
        ]
    if peak_mib:
        out["peak_vram_mib"] = peak_mib
    return out


def _summary(identity: Identity, result: BenchResult) -> str:
    parts = [f"served as {identity.model}"]
    for p in result.prompts:
        decode = f", decode {p.decode_tps:.1f}" if p.decode_tps is not None else ""
        parts.append(f"{p.name} wall {p.wall_tps:.1f} tok/s (CV {p.cv:.1%}{decode})")
    if not result.counted_by_server:
        parts.append("tokens counted from streamed chunks (the server sent no usage)")
    parts += result.skipped
    return "; ".join(parts)
