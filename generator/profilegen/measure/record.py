"""A bench result as an evidence record that names the server measured: the digest of the
engine command the profile runs, the machine as NVML saw it, the settings that differed."""

from __future__ import annotations

import datetime
import hashlib
from typing import Any

from ..errors import UsageError
from ..explain.core import Scenario, explain
from ..fit.rigs import find_registry_rig
from ..model import Profile
from ..registry import Registry
from .identity import Identity
from .machine import Machine
from .run import BenchResult


def engine_command_digest(registry: Registry, profile: Profile) -> str | None:
    """sha256 of the engine's executable and arguments as the container runs them at the
    profile's defaults (what `explain PROFILE` shows); None where the container refuses."""
    run = explain(registry, profile, Scenario())
    if run.exe is None:
        return None
    words = "\0".join((run.exe, *run.argv))
    return hashlib.sha256(words.encode()).hexdigest()


def evidence_record(
    registry: Registry,
    identity: Identity,
    result: BenchResult,
    url: str,
    machine: Machine | None,
    *,
    rig: str | None,
    by: str | None,
    peak_mib: int | None,
) -> dict[str, Any]:
    profile = identity.profile
    if profile is None:
        raise UsageError("--record needs the profile the server is (name it, or --profile)")
    if rig is not None:
        where = find_registry_rig(registry, rig).id
    else:
        where = (machine.registry_rig(registry) if machine else None) or profile.rig
    today = datetime.date.today().isoformat()
    record: dict[str, Any] = {
        "key": f"bench-{profile.id}-{today}"[:80],
        "date": today,
        "rig": where,
        "method": "bench",
    }
    if by:
        record["contributor"] = by
    if machine is not None:
        record["hardware"] = machine.hardware()
    record["source"] = f"profilegen bench {url}: {result.method.describe()}"
    digest = engine_command_digest(registry, profile)
    if digest:
        record["engine_command"] = digest
    record["summary"] = _summary(identity, result)
    if identity.settings:
        record["settings"] = dict(identity.settings)
    record["measured"] = measured(result, peak_mib)
    return record


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
