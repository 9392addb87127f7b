"""`profilegen show` as text: the facts a person reads before choosing a profile (what the
rendered compose header says), what it is for and which engine bugs it runs into with their
mitigations, upstream's advice, and every evidence record, newest first, with its rig.

The same facts as `show --format json|yaml` (the resolved profile), in words; registry text is
printed without control characters.
"""

from __future__ import annotations

import textwrap
from typing import Any

from ..errors import printable
from ..model import Profile
from ..model.advice import Source
from ..model.evidence import Evidence
from ..registry import Registry
from .catalog import decode_text, kv_text, num, prefill_text, settings_text
from .view import profile_view

LABEL = 11  # width of the label column


def _line(label: str, text: str) -> str:
    return f"{label.ljust(LABEL)} {printable(text)}".rstrip()


def _more(text: str) -> str:
    return f"{' ' * LABEL} {printable(text)}".rstrip()


def _source(source: Source | None) -> str:
    return f" (read at {source})" if source is not None else ""


def wrapped(lines: list[str], width: int) -> list[str]:
    """Each line wrapped to the width, its continuation under its own text."""
    out = []
    for i, line in enumerate(lines):
        body = line[LABEL + 1 :]
        indent = " " * (LABEL + 1 + len(body) - len(body.lstrip())) if i else "  "
        out += textwrap.wrap(
            line, max(width, 40), subsequent_indent=indent, break_on_hyphens=False
        ) or [""]
    return out


def profile_summary(registry: Registry, profile: Profile) -> list[str]:
    view = profile_view(registry, profile)
    return [
        printable(f"{profile.id}: {profile.title}"),
        *_serving(registry, profile, view["resolved"]),
        *_choosing(profile),
        *_evidence(profile),
        "",
        f"Every setting: profilegen show {profile.id} --format yaml",
    ]


def _serving(registry: Registry, p: Profile, resolved: dict[str, Any]) -> list[str]:
    engine = registry.engines[p.engine]
    rig = registry.rigs[p.rig]
    env = p.envelope
    gpu = registry.gpus[rig.gpu].name
    seqs = "sequence" if env.max_num_seqs == 1 else "sequences"
    out = [
        _line("Status", p.status),
        _line("Engine", f"{engine.id} ({engine.kind}), image {resolved['engine']['image']}"),
        _line("Model", f"{resolved['model']['name']} / {p.weights}"),
        _line("Rig", f"{rig.id}: {rig.count}x {gpu}, TP {env.tp}"),
        _line("Context", f"{num(env.max_model_len)} tokens x {env.max_num_seqs} {seqs}"),
        _line("KV", kv_text(env.kv_cache_dtype, engine.kind)),
    ]
    drafter = resolved["drafter"]
    if p.drafter is not None and drafter is not None:
        text = f"{p.drafter.id} ({drafter['method']}, n={p.drafter.width})"
        out.append(_line("Drafter", text))
    else:
        out.append(_line("Drafter", "none"))
    out.append(_line("Patches", " -> ".join(p.patches) or "none"))
    names = ", ".join(resolved["model"]["served_names"])
    out.append(
        _line("Serves", f"{names} on port {p.port} (container {resolved['container_name']})")
    )
    # Whether fetch downloads one commit, or UNPINNED: whatever a branch holds that day.
    for i, (role, artifact) in enumerate(resolved["artifacts"].items()):
        what = f"{role} {artifact.get('repo') or artifact['key']}: {artifact['pin']}"
        out.append(_line("Pin" if i == 0 else "", what))
    return out


def _choosing(p: Profile) -> list[str]:
    out = [_line("Best for", (p.best_for or "not stated") + _source(p.best_for_source))]
    if p.exposures is None:
        out.append(_line("Exposures", "not stated"))
    elif not p.exposures:
        out.append(_line("Exposures", "none known" + _source(p.exposures_source)))
    for i, e in enumerate(p.exposures or []):
        out.append(_line("Exposures" if i == 0 else "", f"{e.issue}: {e.effect}"))
        if e.mitigation:
            out.append(_more(f"  mitigation: {e.mitigation}"))
        out.append(_more(f"  read at {e.source}"))
    for i, r in enumerate(p.recommendations):
        rig = f" ({r.rig})" if r.rig else ""
        out.append(_line("Upstream" if i == 0 else "", f"{r.kind}{rig}: {r.says}"))
        out.append(_more(f"  read at {r.source}"))
    for i, caveat in enumerate(p.caveats):
        out.append(_line("Caveats" if i == 0 else "", caveat))
    return out


def _evidence(p: Profile) -> list[str]:
    if not p.evidence:
        return [_line("Evidence", "none recorded")]
    ranked = sorted(enumerate(p.evidence), key=lambda t: (t[1].date, t[0]), reverse=True)
    out = [_line("Evidence", f"{len(p.evidence)} record(s), newest first")]
    for _, ev in ranked:
        out.append(_more(f"{ev.date} on {ev.rig} ({ev.method}): {_measured(ev)}"))
        settings = settings_text(ev)
        if settings:
            out.append(_more(f"  with {settings}"))
        out.append(_more(f"  from {ev.source}"))
    return out


def _measured(ev: Evidence) -> str:
    m = ev.measured
    parts = []
    decode = decode_text(m)
    if decode:
        parts.append(f"decode {decode} tok/s (narrative / code)")
    prefill = prefill_text(m)
    if prefill:
        parts.append(f"prefill {prefill}")
    if m.kv_pool_tokens:
        parts.append(f"KV pool {num(m.kv_pool_tokens)} tokens")
    parts += [f"{q.suite} {q.setting}: {q.pass_at_1}/{q.total}" for q in m.quality]
    if m.boots is not None and not parts:
        parts.append("boots" if m.boots else "does not boot")
    return "; ".join(parts) or "no figure"
