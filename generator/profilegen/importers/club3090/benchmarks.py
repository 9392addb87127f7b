"""BENCHMARKS.md brought across: each measured row an evidence record on the profile it measured.

A row lands on a profile when its compose cell names one catalogue entry, its rig cell names
cards the registry has a rig for, it has a date and it states at least one figure. Every other
row is listed with the reason. Records the import made carry `origin` (file, revision, line),
so a re-import replaces exactly those and keeps every record a maintainer wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import benchrows as br
from .benchmap import Catalogue
from .benchrig import RigCell, plain, read_rig
from .benchtable import OtherTable, TableRow, read_tables
from .catalog import Entry
from .source import Tree

BENCHMARKS = "BENCHMARKS.md"
# Cards the importer can write a rig for (registry GPU id -> the card word in a rig id).
RIG_CARDS = {"rtx-3090": "3090", "rtx-4090": "4090", "rtx-5090": "5090"}


@dataclass
class Registry:
    """What the rows are matched against: the imported profiles, the rigs, GPUs, engines."""

    profiles: dict[str, dict[str, Any]]  # profile id -> imported data (with upstream_key)
    rigs: dict[str, dict[str, Any]]  # rig id -> rig data (existing or being imported)
    gpu_gib: dict[str, float]  # GPU id -> memory per card, GiB
    engines: set[str]


@dataclass
class Landed:
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unmapped: list[tuple[int, str]] = field(default_factory=list)
    others: list[OtherTable] = field(default_factory=list)
    new_rigs: set[str] = field(default_factory=set)

    @property
    def rows(self) -> int:
        return sum(len(r) for r in self.records.values())


def imported(record: dict[str, Any]) -> bool:
    """A record this import wrote (and a re-import replaces)."""
    origin = record.get("origin")
    return isinstance(origin, dict) and origin.get("file") == BENCHMARKS


def import_benchmarks(
    tree: Tree, entries: list[Entry], reg: Registry, rev: str | None
) -> Landed | None:
    text = tree.text(BENCHMARKS)
    if text is None:
        return None
    rows, others = read_tables(text)
    catalogue = Catalogue(entries, tree.files())
    by_key = {p["upstream_key"]: pid for pid, p in reg.profiles.items() if p.get("upstream_key")}
    out = Landed(others=others)
    for row in rows:
        resolved = catalogue.resolve(row.cells["compose"], row.heading, row.section)
        if resolved.key is None:
            out.unmapped.append((row.line, resolved.why or "unmapped"))
            continue
        pid = by_key.get(resolved.key)
        if pid is None:
            continue  # an entry not imported this time (--only)
        record = _record(row, pid, reg, rev, out)
        if isinstance(record, str):
            out.unmapped.append((row.line, f"{resolved.key}: {record}"))
        else:
            out.records.setdefault(pid, []).append(record)
    return out


def _record(
    row: TableRow, pid: str, reg: Registry, rev: str | None, out: Landed
) -> dict[str, Any] | str:
    """The evidence record of a row, or why it cannot be one."""
    profile = reg.profiles[pid]
    date = re.search(r"\d{4}-\d{2}-\d{2}", row.cells.get("date", ""))
    if date is None:
        return "no date"
    cell = read_rig(row.cells.get("rig", ""), row.section)
    rig = _rig(cell, profile, reg, out)
    if rig.startswith("!"):
        return rig[1:]
    measured = _measured(row, cell, reg.gpu_gib.get(reg.rigs[rig]["gpu"], 24.0))
    if not measured:
        return "states no figure (decode, prefill, peak VRAM, soak)"
    # The source line first: it names the record (a file's layout is kept per record).
    at = f"@{rev}" if rev else ""
    record: dict[str, Any] = {"source": f"club-3090 {BENCHMARKS}{at} line {row.line}"}
    record["origin"] = {"file": BENCHMARKS, **({"rev": rev} if rev else {}), "line": row.line}
    record.update({"date": date.group(0), "rig": rig, "method": "bench"})
    if cell.contributor:
        record["contributor"] = cell.contributor
    hardware = cell.hardware()
    if hardware:
        record["hardware"] = hardware
    engine = _engine(row, profile, reg)
    if engine:
        record["engine"] = engine
    record["summary"] = br.summary(row.cells["compose"], row.cells.get("notes", ""))
    settings = _settings(row, profile)
    if settings:
        record["settings"] = settings
    record["measured"] = measured
    return record


def _measured(row: TableRow, cell: RigCell, card_gib: float) -> dict[str, Any]:
    c = row.cells
    out: dict[str, Any] = {}
    pair = br.decode(c.get("tps", ""))
    if pair:
        out["decode_tps_narrative"], out["decode_tps_code"] = (_tidy(v) for v in pair)
    points = br.prefill(c.get("prefill", ""))
    if points:
        out["prefill"] = points
    vram = br.peak_vram_mib(c.get("vram", ""), cell.cards or 1, card_gib)
    if vram:
        out["peak_vram_mib"] = vram
    soak = br.soak(c.get("soak", ""), c.get("notes", ""))
    if soak:
        out["soak"] = soak
    return out


def _settings(row: TableRow, profile: dict[str, Any]) -> dict[str, Any]:
    stated = br.compose_settings(row.cells["compose"])
    kv = br.kv_dtype(row.cells.get("kv_dtype", ""))
    if kv and "kv_cache_dtype" not in stated:
        stated["kv_cache_dtype"] = kv
    ctx = plain(row.cells.get("ctx", "")).replace(",", "")
    if re.fullmatch(r"\d{4,7}", ctx) and "max_model_len" not in stated:
        stated["max_model_len"] = int(ctx)
    return br.differing(stated, profile)


def _engine(row: TableRow, profile: dict[str, Any], reg: Registry) -> str | None:
    """A vLLM release the row names (`v0.24.0 pin`), where it is not the profile's engine."""
    m = re.search(
        r"\bv(0\.\d+\.\d+)\b", plain(row.cells["compose"]) + " " + row.cells.get("rig", "")
    )
    if m is None or not str(profile.get("engine", "")).startswith("vllm"):
        return None
    engine = f"vllm-v{m.group(1)}"
    return engine if engine in reg.engines and engine != profile.get("engine") else None


def _rig(cell: RigCell, profile: dict[str, Any], reg: Registry, out: Landed) -> str:
    """The registry rig of the cards the row ran on ("!why" when there is none)."""
    own = str(profile["rig"])
    if not cell.gpus:
        return own
    if None in cell.gpus:
        lacking = [n for n in cell.names if not n.startswith("RTX ")]
        return f"!measured on {', '.join(lacking) or 'a GPU'} the registry has no GPU entry for"
    gpus = [g for g in cell.gpus if g is not None]
    need = int(reg.rigs.get(own, {}).get("count", len(gpus)))
    if need < len(gpus) and len(set(gpus)) == 1:
        gpus = gpus[:need]  # a bigger machine: the server ran on the cards its TP takes
    found = _matching(gpus, cell.nvlink, reg)
    if found:
        return found
    if len(set(gpus)) > 1:
        return f"!mixed cards ({cell.hardware().get('gpu')}) the registry has no rig for"
    card = RIG_CARDS.get(gpus[0])
    if card is None:
        return f"!{len(gpus)}x {gpus[0]}: no registry rig"
    ident = f"{len(gpus)}x{card}" + ("-pcie" if len(gpus) > 1 else "")
    out.new_rigs.add(ident)
    reg.rigs[ident] = {"id": ident, "gpu": gpus[0], "count": len(gpus)}
    return ident


def _matching(gpus: list[str], nvlink: bool | None, reg: Registry) -> str | None:
    def score(item: tuple[str, dict[str, Any]]) -> tuple[int, int, int, str]:
        ident, rig = item
        link = rig.get("interconnect") or {}
        linked = bool(link.get("nvlink")) or link.get("kind") == "nvlink"
        plain_host = rig.get("host_os", "linux") == "linux" and rig.get("desktop_gpu") is None
        return (int(linked != bool(nvlink)), int(not plain_host), len(ident), ident)

    fits = [
        (ident, rig)
        for ident, rig in reg.rigs.items()
        if int(rig.get("count", 0)) == len(gpus)
        and sorted(rig.get("cards") or [rig.get("gpu")] * len(gpus)) == sorted(gpus)
    ]
    return min(fits, key=score)[0] if fits else None


def _tidy(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
