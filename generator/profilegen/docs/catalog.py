"""Generated documentation: the profile catalogue and per-model benchmark tables (pure)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from ..errors import printable
from ..model import Profile
from ..model.evidence import Evidence, Measured
from ..model.profile import Envelope
from ..registry import Registry
from ..render.templating import make_environment
from ..resources import template_dirs
from .charts import bars, render_svg

DOCS_DIR = "docs"
CATALOG = f"{DOCS_DIR}/CATALOG.md"
BENCHMARKS_DIR = f"{DOCS_DIR}/benchmarks"


def benchmark_page(model_id: str) -> str:
    return f"{BENCHMARKS_DIR}/{model_id}.md"


# -- formatting shared with `changelog` ---------------------------------------------------------


def num(value: float | int) -> str:
    """Figures as people quote them: 93.69, 1,286.33, 244,320 (no float noise)."""
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def tokens(count: int) -> str:
    """A context length the way benches label it: 10k, 90k, or the exact count."""
    return f"{count // 1000}k" if count % 1000 == 0 else f"{count:,}"


# The KV cache dtype an engine uses where the profile sets none (the flag is not passed).
DEFAULT_KV = {"llama.cpp": "f16", "vllm": "auto", "sglang": "auto"}


def kv_text(dtype: str | None, engine_kind: str | None = None) -> str:
    """The profile's KV cache dtype, or the engine's default said as one: `f16 (default)`."""
    if dtype:
        return dtype
    return f"{DEFAULT_KV[engine_kind]} (default)" if engine_kind in DEFAULT_KV else "default"


def envelope_text(env: Envelope, *, backend: bool = False, engine_kind: str | None = None) -> str:
    util = f"util {num(env.gpu_memory_utilization)}" if env.gpu_memory_utilization else None
    pool = f"KV pool {num(env.kv_cache_memory / 1e9)} GB" if env.kv_cache_memory else None
    parts = [
        f"TP{env.tp}",
        f"{kv_text(env.kv_cache_dtype, engine_kind)} KV"
        + (f" on {env.attention_backend}" if backend and env.attention_backend else ""),
        f"{num(env.max_model_len)} x {env.max_num_seqs}",
    ]
    return ", ".join([*parts, *(p for p in (util, pool) if p)])


def decode_text(m: Measured) -> str | None:
    if m.decode_tps_narrative is None and m.decode_tps_code is None:
        return None
    narrative = num(m.decode_tps_narrative) if m.decode_tps_narrative else "-"
    code = num(m.decode_tps_code) if m.decode_tps_code else "-"
    return f"{narrative} / {code}"


def prefill_text(m: Measured) -> str | None:
    if not m.prefill:
        return None
    return ", ".join(f"{num(p.tokens_per_s)} @{tokens(p.context_tokens)}" for p in m.prefill)


def newest_evidence(
    profile: Profile, wanted: Callable[[Evidence], bool] | None = None
) -> Evidence | None:
    """The newest record that passes `wanted`, taken at the profile's own settings where one
    is (a record of other settings, `max_num_seqs=2` say, speaks for the profile only when
    none is); later in the file on a tie."""
    ranked = [
        (settings_text(ev) is None, ev.date, i, ev)
        for i, ev in enumerate(profile.evidence)
        if not ev.synthetic and (wanted is None or wanted(ev))
    ]
    return max(ranked, key=lambda t: t[:3])[3] if ranked else None


def has_speed(ev: Evidence) -> bool:
    return decode_text(ev.measured) is not None or bool(ev.measured.prefill)


def machine_text(ev: Evidence) -> str | None:
    """The machine as measured, beyond the registry rig: cards, link, power cap, host."""
    hw = ev.hardware
    if hw is None:
        return None
    cards = f"{hw.cards}x {hw.gpu}" if hw.cards and hw.gpu else hw.gpu
    power = "/".join(num(w) for w in hw.power_cap_w)
    parts = [cards, hw.link, f"{power} W" if power else None, hw.host]
    return ", ".join(p for p in parts if p) or None


def settings_text(ev: Evidence) -> str | None:
    """What differed from the profile's envelope when the record was taken."""
    given = ev.settings.model_dump(exclude_none=True)
    return (
        ", ".join(f"{k}={num(v) if isinstance(v, (int, float)) else v}" for k, v in given.items())
        or None
    )


# -- rows ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogRow:
    id: str
    title: str
    upstream_key: str | None
    engine: str
    image: str
    rig: str
    envelope: str
    drafter: str | None
    status: str
    decode: str | None
    prefill: str | None
    evidence: str | None
    siblings: str | None
    exposures: str | None = None  # the known engine bugs it runs into, by issue


@dataclass(frozen=True)
class ModelSection:
    id: str
    name: str
    page: str  # relative to docs/
    rows: list[CatalogRow]


def _catalog_row(registry: Registry, p: Profile) -> CatalogRow:
    engine = registry.engines[p.engine]
    lead = p.headline_evidence
    ev = lead if lead is not None and has_speed(lead) else newest_evidence(p, has_speed)
    drafter = f"{p.drafter.id} n={p.drafter.width}" if p.drafter else None
    return CatalogRow(
        id=p.id,
        title=p.title,
        upstream_key=p.upstream_key,
        engine=engine.kind,
        image=engine.image_ref,
        rig=p.rig,
        envelope=envelope_text(p.envelope, engine_kind=engine.kind),
        drafter=drafter,
        status=p.status,
        decode=decode_text(ev.measured) if ev else None,
        prefill=prefill_text(ev.measured) if ev else None,
        evidence=f"{ev.date}, {ev.rig}" if ev else None,
        siblings=", ".join(p.siblings) or None,
        exposures=", ".join(e.issue for e in p.exposures or []) or None,
    )


def catalog_sections(registry: Registry) -> list[ModelSection]:
    by_model: dict[str, list[Profile]] = {}
    for p in registry.concrete_profiles():
        by_model.setdefault(p.model, []).append(p)
    return [
        ModelSection(
            id=model_id,
            name=registry.models[model_id].name,
            page=benchmark_page(model_id).removeprefix(f"{DOCS_DIR}/"),
            rows=[_catalog_row(registry, p) for p in profiles],
        )
        for model_id, profiles in sorted(by_model.items())
    ]


def _measured_row(p: Profile, ev: Evidence) -> dict[str, Any]:
    m = ev.measured
    verify = None
    if m.verify_full or m.verify_stress:
        verify = f"{m.verify_full or '-'} / {m.verify_stress or '-'}"
    return {
        "profile": p.id,
        "date": ev.date,
        "rig": ev.rig,
        "by": ev.contributor,
        "machine": machine_text(ev),
        "settings": settings_text(ev),
        "decode": decode_text(m),
        "ttft": "/".join(num(t) for t in m.ttft_ms) or None,
        "prefill": prefill_text(m),
        "peak_vram": num(m.peak_vram_mib) if m.peak_vram_mib else None,
        "kv_pool": num(m.kv_pool_tokens) if m.kv_pool_tokens else None,
        "filled": num(m.max_context_filled) if m.max_context_filled else None,
        "verify": verify,
        "soak": m.soak,
        "acceptance": "-".join(num(a) for a in m.acceptance_length) or None,
        "boots": None if m.boots is None else ("yes" if m.boots else "no"),
        "source": ev.source,
        "summary": ev.summary,
        "quality": [
            {
                "suite": q.suite,
                "setting": q.setting,
                "pass_at_1": f"{q.pass_at_1}/{q.total}",
                "pass_at_3": f"{q.pass_at_3}/{q.total}" if q.pass_at_3 is not None else None,
            }
            for q in m.quality
        ],
    }


def benchmark_rows(registry: Registry, model_id: str) -> list[dict[str, Any]]:
    """Every evidence record of the model's profiles: by profile, newest first."""
    rows: list[dict[str, Any]] = []
    for p in registry.concrete_profiles():
        if p.model != model_id:
            continue
        served = [(i, ev) for i, ev in enumerate(p.evidence) if not ev.synthetic]
        ranked = sorted(served, key=lambda t: (t[1].date, t[0]), reverse=True)
        rows.extend(_measured_row(p, ev) for _i, ev in ranked)
    return rows


# -- rendering ----------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\|<>`[\]&])")


def md_cell(value: object) -> str:
    """Registry text inside a Markdown table: no cell breaks, no HTML, no links or images
    (`[x](url)`, `![x](url)` shown as written), no character references (`&#x202e;` would
    put the hidden character `printable` escapes on the page), one line."""
    if value is None:
        return "-"
    text = printable(" ".join(str(value).split()))
    return _MD_SPECIAL.sub(r"\\\1", text)


def _environment(root: Path) -> SandboxedEnvironment:
    # Every value that reaches a page is escaped; the templates hold the only markup.
    env = make_environment(template_dirs(root), md_cell)
    return env


def docs_plan(registry: Registry) -> dict[str, bytes]:
    """The generated docs/ pages: relative path -> bytes; no dates, so the bytes are stable."""
    env = _environment(registry.root)
    sections = catalog_sections(registry)
    plan = {
        CATALOG: env.get_template("docs/catalog.md.j2")
        .render(sections=sections, total=sum(len(s.rows) for s in sections))
        .encode()
    }
    for section in sections:
        rows = benchmark_rows(registry, section.id)
        profiles = [p for p in registry.concrete_profiles() if p.model == section.id]
        drawn = bars(profiles)
        chart = None
        if drawn:
            chart = f"{section.id}.svg"
            title = f"{registry.models[section.id].name}: measured decode speed per rig"
            plan[f"{BENCHMARKS_DIR}/{chart}"] = render_svg(title, drawn).encode()
        page = env.get_template("docs/benchmarks.md.j2").render(
            model=registry.models[section.id],
            chart=chart,
            rows=rows,
            quality=[
                dict(q, profile=r["profile"], date=r["date"]) for r in rows for q in r["quality"]
            ],
        )
        plan[benchmark_page(section.id)] = page.encode()
    return plan


def orphan_pages(root: Path, plan: Sequence[str]) -> list[Path]:
    """Benchmark pages and charts the plan no longer has (a model without profiles, or
    without a measured speed)."""
    folder = root / BENCHMARKS_DIR
    if not folder.is_dir():
        return []
    keep = set(plan)
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix in (".md", ".svg") and f"{BENCHMARKS_DIR}/{p.name}" not in keep
    )
