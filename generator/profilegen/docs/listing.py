"""`profilegen list`: the catalogue at a glance, narrowed and, for one rig, ranked by speed.

Seen from a rig, each profile is judged as it renders: one whose TP needs more GPUs than the
rig has does not fit (the container refuses to start), and the fit runs at the profile's own
settings. Profiles are ranked by the decode speed measured on that rig; a figure measured on
another rig is shown with the rig it came from, and ranks after.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import click

from ..errors import ProfilegenError, UsageError
from ..families import fit_model
from ..fit.detect import detect_rig
from ..fit.predict import FitOptions, fit_profile, read_lock_or_none
from ..fit.rigs import find_rig, same_cards
from ..lockfile.lock import Lock
from ..model import Profile, Rig
from ..model.evidence import Evidence, has_decode, newest
from ..registry import Registry
from .view import list_rows

TITLE_WIDTH = 44
COLUMNS = (
    "id",
    "title",
    "engine",
    "status",
    "rig",
    "tp",
    "kv_cache_dtype",
    "max_model_len",
    "spec_n",
    "pinned",
)
# Seen from a rig: its measured speed (and where it was measured), and the verdict.
RIG_COLUMNS = (
    "id",
    "title",
    "engine",
    "status",
    "tp",
    "max_model_len",
    "max_num_seqs",
    "tok_s",
    "measured_on",
    "fit",
    "pinned",
)


@dataclass(frozen=True)
class ListOptions:
    fmt: str = "text"
    rig: str | None = None
    fits: bool = False
    detect: bool = False
    all: bool = False  # retired profiles too
    engines: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()


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


def _wanted(registry: Registry, row: dict[str, Any], opts: ListOptions) -> bool:
    profile = registry.profiles[row["id"]]
    if opts.statuses:
        if profile.status not in opts.statuses:
            return False
    elif profile.status == "retired" and not opts.all:
        return False
    if opts.engines and not any(_engine_is(registry, profile, e) for e in opts.engines):
        return False
    return not opts.models or any(profile.model.startswith(m) for m in opts.models)


def _engine_is(registry: Registry, profile: Profile, name: str) -> bool:
    """An engine id, its prefix (vllm-v0.27), or its family (vllm, llama.cpp, sglang)."""
    engine = registry.engines[profile.engine]
    return profile.engine.startswith(name) or engine.kind == name


def check_filters(registry: Registry, opts: ListOptions) -> None:
    kinds = {e.kind for e in registry.engines.values()}
    for name in opts.engines:
        if name not in kinds and not any(e.startswith(name) for e in registry.engines):
            raise UsageError(
                f"no engine {name!r} (an engine id, a prefix of one, or one of {', '.join(sorted(kinds))})"
            )
    for name in opts.models:
        if not any(m.startswith(name) for m in registry.models):
            raise UsageError(f"no model {name!r} (see `profilegen show MODEL` or `list`)")


def fit_verdict(
    registry: Registry, profile: Profile, rig: Rig, lock: Lock | None
) -> dict[str, Any]:
    """How the profile renders on the rig as it is: refused (more GPUs than the rig has), boots
    or not at its own settings, and how many full-length requests its pool holds."""
    needs = profile.envelope.tp * (profile.envelope.pp or 1)
    if needs > rig.count:
        return {
            "rig": rig.id,
            "fits": False,
            "needs_gpus": needs,
            "verdict": f"no: needs {needs} GPUs",
        }
    if fit_model(registry.engines[profile.engine].kind) is None:
        return {"rig": rig.id, "fits": None, "verdict": "unknown: no fit model for this engine"}
    try:
        r = fit_profile(registry, profile, FitOptions(), rig=rig, lock=lock)
    except ProfilegenError as exc:
        return {"rig": rig.id, "fits": None, "error": str(exc), "verdict": "unknown: fit failed"}
    out = {
        "rig": rig.id,
        "tp": r.tp,
        "kv_pool_tokens": r.kv_pool_tokens,
        "headroom_tokens": r.headroom_tokens,
        "boots": r.boots,
        "within_policy": r.within_policy,
        "max_concurrency": round(r.max_concurrency, 2),
        "fits": r.boots and r.within_policy,
    }
    if not r.boots:
        verdict = "no: does not boot"
    elif not r.within_policy:
        verdict = "no: over the rig's policy"
    elif r.fits or r.max_num_seqs == 1:
        verdict = "yes"
    else:
        # It starts; its sequences share a pool that holds fewer full-length requests.
        verdict = f"yes, {r.max_concurrency:.2g} of {r.max_num_seqs} at full length"
    return {**out, "verdict": verdict}


def speed_on(registry: Registry, profile: Profile, rig: Rig) -> dict[str, Any] | None:
    """The newest measured decode speed on the rig; else on a rig of the same cards; else on
    any rig (tier 0, 1, 2: how far the figure is from the rig asked about)."""

    def tier(ev: Evidence) -> int:
        if ev.rig == rig.id:
            return 0
        other = registry.rigs.get(ev.rig)
        return 1 if other is not None and same_cards(other, rig) else 2

    measured = [ev for ev in profile.evidence if has_decode(ev)]
    for wanted in (0, 1, 2):
        ev = newest([e for e in measured if tier(e) == wanted])
        if ev is not None:
            return _speed(ev, wanted)
    return None


def _speed(ev: Evidence, tier: int) -> dict[str, Any]:
    m = ev.measured
    return {
        "narrative": m.decode_tps_narrative,
        "code": m.decode_tps_code,
        "rig": ev.rig,
        "date": ev.date,
        "tier": tier,
    }


def _rank(row: dict[str, Any]) -> tuple[int, float, str]:
    speed = row.get("speed")
    if not speed:
        return (3, 0.0, row["id"])
    return (speed["tier"], -(speed["narrative"] or speed["code"] or 0.0), row["id"])


def run_list(registry: Registry, opts: ListOptions) -> int:
    check_filters(registry, opts)
    rig = _list_rig(registry, opts)
    rows = [dict(r, title=registry.profiles[r["id"]].title) for r in list_rows(registry)]
    rows = [r for r in rows if _wanted(registry, r, opts)]
    if rig is not None:
        lock = read_lock_or_none(registry)
        for row in rows:
            profile = registry.profiles[row["id"]]
            row["fit"] = fit_verdict(registry, profile, rig, lock)
            row["speed"] = speed_on(registry, profile, rig)
        if opts.fits:
            rows = [r for r in rows if r["fit"]["fits"]]
        rows.sort(key=_rank)
    if opts.fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return 0
    columns: tuple[str, ...] = COLUMNS
    # The weights are one commit, or UNPINNED: whatever a branch holds when fetched.
    rows = [dict(r, pinned="yes" if r["weights_pinned"] else "UNPINNED") for r in rows]
    if rig is not None:
        cards = " + ".join(registry.gpus[g].name for g in rig.cards)
        click.echo(f"rig {rig.id}: {cards or f'{rig.count} x {registry.gpus[rig.gpu].name}'}; "
                   "ranked by decode tok/s measured on it (narrative / code)")  # fmt: skip
        rows, columns = [_rig_cells(r, rig) for r in rows], RIG_COLUMNS
    _table(rows, columns)
    return 0


def _rig_cells(row: dict[str, Any], rig: Rig) -> dict[str, Any]:
    speed = row["speed"]
    tok = None
    if speed:
        tok = " / ".join(
            f"{v:g}" if v is not None else "-" for v in (speed["narrative"], speed["code"])
        )
    return {
        **row,
        "tok_s": tok,
        "measured_on": None if not speed or speed["rig"] == rig.id else speed["rig"],
        "fit": row["fit"]["verdict"],
    }


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    def cell(row: dict[str, Any], column: str) -> str:
        value = row.get(column)
        text = "-" if value is None else str(value)
        return (
            text
            if column != "title" or len(text) <= TITLE_WIDTH
            else text[: TITLE_WIDTH - 3] + "..."
        )

    table = [[cell(r, c) for c in columns] for r in rows]
    heads = [c.upper().replace("TOK_S", "TOK/S") for c in columns]
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(heads)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip())
    for cells in table:
        click.echo("  ".join(v.ljust(w) for v, w in zip(cells, widths, strict=True)).rstrip())
