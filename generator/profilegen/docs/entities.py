"""`profilegen rigs`, `engines`, `gpus`: the registry's hardware and engines, one row each, with
the names the other commands take and how many profiles use each."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import click

from ..fit.rigs import plainness
from ..model import Rig
from ..registry import Registry


def _cards(rig: Rig) -> str:
    ids = rig.cards or [rig.gpu] * rig.count
    counts = Counter(ids)
    return " + ".join(f"{n}x {gid}" for gid, n in counts.items())


def _link(rig: Rig) -> str:
    link = rig.interconnect
    if rig.count == 1 or link.kind == "single":
        return "-"
    parts = ["NVLink" if link.nvlink or link.kind == "nvlink" else "PCIe"]
    if link.pcie_gen:
        parts.append(f"gen{link.pcie_gen}")
    if link.pcie_lanes:
        parts.append("x" + "/x".join(str(n) for n in link.pcie_lanes))
    return " ".join(parts)


def _in_use(registry: Registry, field: str) -> Counter[str]:
    return Counter(getattr(p, field) for p in registry.concrete_profiles() if p.status != "retired")


def _short(rig: Rig, registry: Registry) -> str | None:
    """The card spelling (2x3090) that names this rig in every command, where it is the one."""
    ids = rig.cards or [rig.gpu] * rig.count
    if len(set(ids)) > 1:
        return None
    same = [
        r for r in registry.rigs.values() if sorted(r.cards or [r.gpu] * r.count) == sorted(ids)
    ]
    word = ids[0].removeprefix("rtx-").replace("-", "")
    return f"{rig.count}x{word}" if min(same, key=plainness).id == rig.id else None


def rig_rows(registry: Registry) -> list[dict[str, Any]]:
    used = _in_use(registry, "rig")
    return [
        {
            "id": r.id,
            "also": _short(r, registry),
            "name": r.name,
            "cards": _cards(r),
            "link": _link(r),
            "host": r.host_os,
            "policy": r.policy.max_gpu_memory_utilization,
            "profiles": used.get(r.id, 0),
        }
        for r in sorted(registry.rigs.values(), key=lambda r: r.id)
    ]


def engine_rows(registry: Registry) -> list[dict[str, Any]]:
    used = _in_use(registry, "engine")
    return [
        {
            "id": e.id,
            "family": e.kind,
            "name": e.name,
            "image": e.image_ref,
            "profiles": used.get(e.id, 0),
        }
        for e in sorted(registry.engines.values(), key=lambda e: (e.kind, e.id))
    ]


def gpu_rows(registry: Registry) -> list[dict[str, Any]]:
    rigs = Counter(g for r in registry.rigs.values() for g in set(r.cards or [r.gpu]))
    return [
        {
            "id": g.id,
            "name": g.name,
            "arch": g.arch,
            "sm": g.sm,
            "vram": str(g.vram),
            "rigs": rigs.get(g.id, 0),
        }
        for g in sorted(registry.gpus.values(), key=lambda g: g.id)
    ]


def echo_rows(rows: list[dict[str, Any]], fmt: str, footer: str | None = None) -> None:
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("(none)")
        return
    columns = list(rows[0])
    table = [["-" if r[c] is None else str(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(columns)]
    click.echo("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for cells in table:
        click.echo("  ".join(v.ljust(w) for v, w in zip(cells, widths, strict=True)).rstrip())
    if footer:
        click.echo(footer)
