"""Benchmark charts: measured decode speed as an SVG bar chart, one series per rig (pure).

Each group of bars is a profile at the context it was measured with; each rig that measured
it has two bars, narrative and code tok/s, from its newest record. Every bar carries what it
shows as data attributes, so a reader (or a test) can check it against the evidence. The SVG
is static (no script, no external reference), so GitHub shows it inside the page as an image.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from ..model import Profile
from ..model.evidence import Evidence, has_decode

WIDTH = 800
LABEL_W = 300
PLOT_W = 460
BAR_H = 9
GROUP_GAP = 10
TOP = 46
# Colour per series, in rig order (colour-blind-safe; repeats past eight rigs).
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#f0e442", "#000000")


@dataclass(frozen=True)
class Bar:
    profile: str
    context: int
    rig: str
    kind: str  # narrative | code
    value: float
    date: str


def context_of(profile: Profile, ev: Evidence) -> int:
    """The context the record was measured with: its own setting, else the profile's."""
    return ev.settings.max_model_len or profile.envelope.max_model_len


def bars(profiles: list[Profile]) -> list[Bar]:
    """The newest decode figures of each (profile, context, rig), in page order."""
    out: list[Bar] = []
    for p in profiles:
        newest: dict[tuple[int, str], Evidence] = {}
        for ev in p.evidence:
            if not has_decode(ev):
                continue
            slot = (context_of(p, ev), ev.rig)
            if slot not in newest or ev.date >= newest[slot].date:
                newest[slot] = ev
        for (context, rig), ev in sorted(newest.items()):
            m = ev.measured
            for kind, value in (("narrative", m.decode_tps_narrative), ("code", m.decode_tps_code)):
                if value is not None:
                    out.append(Bar(p.id, context, rig, kind, float(value), ev.date))
    return out


def _ticks(top: float) -> tuple[float, list[float]]:
    """A rounded axis maximum at or above `top`, and ticks 1, 2, 2.5 or 5 times a power of
    ten apart (at most eight intervals)."""
    magnitude = 10.0 ** math.floor(math.log10(top))
    step = next(
        m * magnitude for m in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10) if top / (m * magnitude) <= 8
    )
    count = math.ceil(top / step - 1e-9)
    return step * count, [step * i for i in range(count + 1)]


def _num(value: float) -> str:
    return f"{value:g}"


def render_svg(title: str, items: list[Bar]) -> str:
    """The chart as SVG text; deterministic for the same bars."""
    rigs = sorted({b.rig for b in items})
    colour = {rig: PALETTE[i % len(PALETTE)] for i, rig in enumerate(rigs)}
    groups: dict[tuple[str, int], list[Bar]] = {}
    for b in items:
        groups.setdefault((b.profile, b.context), []).append(b)
    axis_max, ticks = _ticks(max(b.value for b in items))
    height = TOP + sum(len(g) * BAR_H + GROUP_GAP for g in groups.values()) + 36
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11" role="img">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="10" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    out += _legend(rigs, colour)
    bottom = height - 30
    for tick in ticks:
        x = LABEL_W + tick / axis_max * PLOT_W
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{bottom}" stroke="#dddddd"/>'
        )
        out.append(f'<text x="{x:.1f}" y="{bottom + 12}" text-anchor="middle">{_num(tick)}</text>')
    out.append(
        f'<text x="{LABEL_W + PLOT_W / 2:.0f}" y="{bottom + 23}" text-anchor="middle">'
        "decode tok/s (solid: narrative, light: code)</text>"
    )
    y = TOP
    for (profile, context), group in groups.items():
        label = f"{profile} @ {context:,}"
        out.append(f'<text x="{LABEL_W - 6}" y="{y + BAR_H * len(group) / 2 + 4:.1f}" '
                   f'text-anchor="end">{escape(label)}</text>')  # fmt: skip
        for b in group:
            out.append(_bar(b, y, axis_max, colour[b.rig]))
            y += BAR_H
        y += GROUP_GAP
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _bar(b: Bar, y: int, axis_max: float, fill: str) -> str:
    width = b.value / axis_max * PLOT_W
    opacity = "1" if b.kind == "narrative" else "0.45"
    tip = f"{b.profile} @ {b.context:,} on {b.rig}, {b.kind}: {_num(b.value)} tok/s ({b.date})"
    return (
        f'<rect x="{LABEL_W}" y="{y}" width="{width:.2f}" height="{BAR_H - 1}" fill="{fill}" '
        f'fill-opacity="{opacity}" data-profile="{escape(b.profile)}" data-context="{b.context}" '
        f'data-rig="{escape(b.rig)}" data-kind="{b.kind}" data-value="{_num(b.value)}">'
        f"<title>{escape(tip)}</title></rect>"
    )


def _legend(rigs: list[str], colour: dict[str, str]) -> list[str]:
    out = []
    x = 10
    for rig in rigs:
        out.append(f'<rect x="{x}" y="24" width="10" height="10" fill="{colour[rig]}"/>')
        out.append(f'<text x="{x + 14}" y="33">{escape(rig)}</text>')
        x += 24 + 7 * len(rig)
    return out
