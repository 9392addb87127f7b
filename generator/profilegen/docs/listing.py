"""`profilegen list`: the catalogue at a glance, optionally as seen from one rig."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import click

from ..errors import ProfilegenError, UsageError
from ..families import fit_model
from ..fit.detect import detect_rig
from ..fit.predict import FitOptions, find_rig, fit_profile, read_lock_or_none
from ..hub.lock import Lock
from ..model import Profile, Rig
from ..registry import Registry
from .view import list_rows


@dataclass(frozen=True)
class ListOptions:
    fmt: str = "text"
    rig: str | None = None
    fits: bool = False
    detect: bool = False


COLUMNS = (
    "id",
    "engine",
    "status",
    "rig",
    "tp",
    "kv_cache_dtype",
    "max_model_len",
    "spec_n",
    "port",
)


# With --rig or --detect: each profile re-targeted to that rig (see `profilegen fit`).
FIT_COLUMNS = (
    "id",
    "engine",
    "status",
    "tp",
    "kv_cache_dtype",
    "max_model_len",
    "max_num_seqs",
    "pool",
    "headroom",
    "fit",
)


def _list_rig(registry: Registry, opts: ListOptions) -> Rig | None:
    if opts.rig and opts.detect:
        raise UsageError("use --rig or --detect, not both")
    if opts.detect:
        return detect_rig(registry)
    if opts.rig:
        return find_rig(registry, opts.rig)
    if opts.fits:
        raise UsageError("--fits needs --rig or --detect")
    return None


def _fit_view(
    registry: Registry, profile: Profile, rig: Rig, lock: Lock | None
) -> dict[str, Any] | None:
    if fit_model(registry.engines[profile.engine].kind) is None:
        return None
    try:
        r = fit_profile(registry, profile, FitOptions(), rig=rig, lock=lock)
    except ProfilegenError as exc:
        return {"rig": rig.id, "error": str(exc), "fits": False}
    keys = (
        "rig",
        "tp",
        "tp_capped_from",
        "kv_pool_tokens",
        "headroom_tokens",
        "fits",
        "within_policy",
    )
    return {k: getattr(r, k) for k in keys}


def _fit_cells(row: dict[str, Any]) -> dict[str, Any]:
    fit = row["fit"]
    if not fit or "error" in fit:
        return {**row, "pool": None, "headroom": None, "fit": "error" if fit else None}
    capped = fit["tp_capped_from"]
    verdict = ("yes" if fit["within_policy"] else "policy") if fit["fits"] else "no"
    return {
        **row,
        "tp": f"{fit['tp']}<{capped}" if capped else fit["tp"],
        "pool": f"{fit['kv_pool_tokens']:,}",
        "headroom": f"{fit['headroom_tokens']:+,}",
        "fit": verdict,
    }


def run_list(registry: Registry, opts: ListOptions) -> int:
    rows = list_rows(registry)
    rig = _list_rig(registry, opts)
    columns: tuple[str, ...] = COLUMNS
    if rig is not None:
        lock = read_lock_or_none(registry)
        for row in rows:
            row["fit"] = _fit_view(registry, registry.profiles[row["id"]], rig, lock)
        if opts.fits:
            rows = [r for r in rows if r["fit"] and r["fit"]["fits"] and r["fit"]["within_policy"]]
    if opts.fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return 0
    if rig is not None:
        cards = " + ".join(registry.gpus[g].name for g in rig.cards)
        click.echo(f"rig {rig.id}: {cards or f'{rig.count} x {registry.gpus[rig.gpu].name}'}")
        rows, columns = [_fit_cells(r) for r in rows], FIT_COLUMNS
    table = [[str(r[c]) if r[c] is not None else "-" for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in table)) for i, c in enumerate(columns)]
    click.echo("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for cells in table:
        click.echo("  ".join(v.ljust(w) for v, w in zip(cells, widths, strict=True)).rstrip())
    return 0
