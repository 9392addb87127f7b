"""`profilegen changelog`: a CHANGELOG entry drafted from a profile and its newest evidence."""

from __future__ import annotations

import click

from ..model import Profile
from ..model.evidence import Evidence
from ..model.model import Artifact
from ..registry import Registry, find_profile
from .catalog import decode_text, envelope_text, newest_evidence, num, prefill_text, settings_text


def _artifact(a: Artifact) -> str:
    pin = f"@{a.revision[:12]}" if a.pinned and a.revision else " (revision not pinned)"
    what = a.quantization or a.format
    files = f", files {', '.join(a.files)}" if a.files else ""
    return f"[`{a.repo}`](https://huggingface.co/{a.repo}){pin}, {what}, {a.size}{files}"


def _joined(parts: list[tuple[object, str]]) -> list[str]:
    """One line from the (value, text) pairs whose value was recorded, or none."""
    kept = [text for value, text in parts if value]
    return [", ".join(kept)] if kept else []


def _measured(ev: Evidence) -> list[str]:
    m = ev.measured
    decode, prefill = decode_text(m), prefill_text(m)
    ttft = f", TTFT {'/'.join(num(t) for t in m.ttft_ms)} ms" if m.ttft_ms else ""
    lines = _joined([(decode, f"decode {decode} tok/s (narrative / code){ttft}")])
    lines += _joined([(prefill, f"prefill (tok/s @ context) {prefill}")])
    lines += _joined(
        [
            (m.peak_vram_mib, f"peak VRAM {num(m.peak_vram_mib or 0)} MiB"),
            (m.kv_pool_tokens, f"KV pool {num(m.kv_pool_tokens or 0)} tokens"),
            (m.max_context_filled, f"filled to {num(m.max_context_filled or 0)} tokens"),
        ]
    )
    lines += _joined(
        [
            (m.verify_full, f"verify-full {m.verify_full}"),
            (m.verify_stress, f"verify-stress {m.verify_stress}"),
            (m.soak, f"soak {m.soak}"),
            (m.acceptance_length, f"acceptance length {'-'.join(map(num, m.acceptance_length))}"),
        ]
    )
    for q in m.quality:
        at3 = f", {q.pass_at_3}/{q.total} pass@3" if q.pass_at_3 is not None else ""
        lines.append(f"quality {q.suite} ({q.setting}): {q.pass_at_1}/{q.total} pass@1{at3}")
    return lines


def changelog_entry(registry: Registry, p: Profile) -> str:
    """Markdown in the Keep-a-Changelog shape; facts only, the author adds the story."""
    engine = registry.engines[p.engine]
    model = registry.models[p.model]
    rig = registry.rigs[p.rig]
    name = p.upstream_key or p.id
    out = [
        "### Added",
        "",
        f"- **`{name}`** ({p.status}): {p.title}",
        f"  - Profile: `registry/profiles/{p.id}.yaml`"
        + (f", extends `{p.extends}`" if p.extends else "")
        + f"; port {p.port}",
        f"  - Engine: {engine.name}, image `{engine.image_ref}`",
        f"  - Weights: {model.name} `{p.weights}`: {_artifact(model.artifacts[p.weights])}",
    ]
    if p.mmproj:
        out.append(f"  - Projector: `{p.mmproj}`: {_artifact(model.artifacts[p.mmproj])}")
    if p.drafter:
        drafter = registry.drafters[p.drafter.id]
        source = _artifact(drafter.artifact) if drafter.artifact else "built into the model"
        out.append(
            f"  - Drafter: {drafter.name} ({drafter.method}, SPEC_N={p.drafter.width}): {source}"
        )
    env = p.envelope
    out.append(f"  - Envelope: {envelope_text(env, backend=True)}; rig {rig.name}")
    out.append(
        "  - Patches: " + (" -> ".join(f"`{x}`" for x in p.patches) if p.patches else "none")
    )
    ev = newest_evidence(p)
    if ev is None:
        out.append("  - Measured: no evidence recorded yet")
    else:
        settings = settings_text(ev)
        where = f"{ev.date} on {ev.rig}" + (f", with {settings}" if settings else "")
        out.append(f"  - Measured ({where}; {ev.source}):")
        out.extend(f"    - {line}" for line in _measured(ev) or ["no figures in this record"])
    for caveat in p.caveats:
        out.append(f"  - Caveat: {caveat}")
    if p.siblings:
        out.append("  - Siblings: " + ", ".join(f"`{s}`" for s in p.siblings))
    return "\n".join(out) + "\n"


def run_changelog(registry: Registry, name: str) -> int:
    click.echo(changelog_entry(registry, find_profile(registry, name)), nl=False)
    return 0
