"""`profilegen changelog`: a CHANGELOG entry drafted from a profile and its newest evidence."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

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


@dataclass(frozen=True)
class Item:
    """One bullet of an entry (`Engine: ...`), with the bullets under it."""

    label: str
    text: str
    under: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    """A CHANGELOG entry: the facts of a profile, as bullets."""

    profile: str
    name: str
    status: str
    title: str
    items: tuple[Item, ...]

    def markdown(self) -> str:
        """Markdown in the Keep-a-Changelog shape; facts only, the author adds the story."""
        out = ["### Added", "", f"- **`{self.name}`** ({self.status}): {self.title}"]
        for item in self.items:
            out.append(f"  - {item.label}: {item.text}" if item.text else f"  - {item.label}:")
            out.extend(f"    - {line}" for line in item.under)
        return "\n".join(out) + "\n"

    def as_json(self) -> dict[str, Any]:
        return {
            "section": "Added",
            "profile": self.profile,
            "name": self.name,
            "status": self.status,
            "title": self.title,
            "items": [asdict(i) for i in self.items],
            "markdown": self.markdown(),
        }


def changelog_entry(registry: Registry, p: Profile) -> Entry:
    """The entry for `p`: where it is, what it runs, and what was measured."""
    engine = registry.engines[p.engine]
    model = registry.models[p.model]
    extends = f", extends `{p.extends}`" if p.extends else ""
    items = [
        Item("Profile", f"`registry/profiles/{p.id}.yaml`{extends}; port {p.port}"),
        Item("Engine", f"{engine.name}, image `{engine.image_ref}`"),
        Item("Weights", f"{model.name} `{p.weights}`: {_artifact(model.artifacts[p.weights])}"),
    ]
    if p.mmproj:
        items.append(Item("Projector", f"`{p.mmproj}`: {_artifact(model.artifacts[p.mmproj])}"))
    if p.drafter:
        drafter = registry.drafters[p.drafter.id]
        source = _artifact(drafter.artifact) if drafter.artifact else "built into the model"
        method = f"{drafter.method}, SPEC_N={p.drafter.width}"
        items.append(Item("Drafter", f"{drafter.name} ({method}): {source}"))
    rig = registry.rigs[p.rig].name
    items.append(Item("Envelope", f"{envelope_text(p.envelope, backend=True)}; rig {rig}"))
    patches = " -> ".join(f"`{x}`" for x in p.patches) if p.patches else "none"
    items += [Item("Patches", patches), _measured_item(p)]
    items += [Item("Caveat", caveat) for caveat in p.caveats]
    if p.siblings:
        items.append(Item("Siblings", ", ".join(f"`{s}`" for s in p.siblings)))
    return Entry(p.id, p.upstream_key or p.id, p.status, p.title, tuple(items))


def _measured_item(p: Profile) -> Item:
    ev = newest_evidence(p)
    if ev is None:
        return Item("Measured", "no evidence recorded yet")
    settings = settings_text(ev)
    where = f"{ev.date} on {ev.rig}" + (f", with {settings}" if settings else "")
    return Item(
        f"Measured ({where}; {ev.source})",
        "",
        tuple(_measured(ev) or ["no figures in this record"]),
    )


def run_changelog(registry: Registry, name: str, fmt: str = "text") -> int:
    entry = changelog_entry(registry, find_profile(registry, name))
    if fmt == "json":
        click.echo(json.dumps(entry.as_json(), indent=2))
    else:
        click.echo(entry.markdown(), nl=False)
    return 0
