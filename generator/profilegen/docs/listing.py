"""`profilegen list`: the catalogue at a glance, narrowed to what a person wants (an engine, a
model, a status, a use, a least context) and, seen from one rig, what starts on it.

Seen from a rig, each profile is judged as it renders: one whose TP needs more GPUs than the
rig has does not fit (the container refuses to start), and the fit runs at the profile's own
settings. A speed is this rig's when it was measured on the rig or on one of the same cards;
a figure from other cards is shown apart and never ranked with this rig's. Every verdict fit
cannot give says why, in the fit error's own first words.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..errors import ProfilegenError, UsageError
from ..families import fit_model
from ..fit.detect import detect_rig
from ..fit.predict import FitOptions, FitResult, fit_profile, read_lock_or_none
from ..fit.rigs import find_rig, same_cards
from ..lockfile.lock import Lock
from ..model import Profile, Rig
from ..model.evidence import Evidence, has_decode, newest
from ..registry import Registry
from .choosing import STATUS_ORDER, ListOptions, Quality, figure, here, quality, uses
from .listing_text import echo_listing
from .view import list_rows


def _list_rig(registry: Registry, opts: ListOptions) -> Rig | None:
    if opts.rig and opts.detect:
        raise UsageError("use --rig or --detect, not both")
    if opts.detect:
        return detect_rig(registry)
    if opts.rig:
        return find_rig(registry, opts.rig)
    if opts.fits:
        raise UsageError("--fits needs --rig or --detect")
    if opts.sort == "speed":
        raise UsageError("--sort speed needs --rig or --detect (a speed is measured on a rig)")
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
    if opts.uses and not set(opts.uses) & set(uses(profile)):
        return False
    if opts.min_context and profile.envelope.max_model_len < opts.min_context:
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
    registry: Registry, profile: Profile, rig: Rig, lock: Lock | None, search: bool = False
) -> dict[str, Any]:
    """How the profile renders on the rig as it is: refused (more GPUs than the rig has), boots
    or not at its own settings, and how many full-length requests its pool holds. `search`:
    where it does not boot (nor was seen serving here), what would (`would_fit`), searched
    from the same fit."""
    needs = profile.envelope.tp * (profile.envelope.pp or 1)
    if needs > rig.count:
        return {
            "rig": rig.id,
            "fits": False,
            "needs_gpus": needs,
            "verdict": f"no: needs {needs} GPUs",
        }
    if fit_model(registry.engines[profile.engine].kind) is None:
        return {"rig": rig.id, "fits": None, "reason": "no fit model for this engine",
                "verdict": "unknown: no fit model for this engine"}  # fmt: skip
    try:
        r = fit_profile(registry, profile, FitOptions(), rig=rig, lock=lock)
    except ProfilegenError as exc:
        error = str(exc)
        return {"rig": rig.id, "fits": None, "error": error, "reason": short_reason(error, profile),
                "verdict": "unknown: fit failed"}  # fmt: skip
    out: dict[str, Any] = {
        "rig": rig.id,
        "tp": r.tp,
        "kv_pool_tokens": r.kv_pool_tokens,
        "headroom_tokens": r.headroom_tokens,
        "boots": r.boots,
        "within_policy": r.within_policy,
        "max_concurrency": round(r.max_concurrency, 2),
        "fits": r.boots and r.within_policy,
    }
    if not r.boots and r.within_policy and _served_on(registry, profile, rig):
        # A boot on these cards at the profile's settings overrules the prediction, as in
        # check (fit-capacity, not fit-boots): the measured speed beside it says so.
        out["fits"] = True
        verdict = "yes: seen serving here (fit predicts no)"
    elif not r.boots:
        verdict = "no: does not boot"
    elif not r.within_policy:
        verdict = "no: over the rig's policy"
    elif r.fits or r.max_num_seqs == 1:
        verdict = "yes"
    else:
        # It starts; its sequences share a pool that holds fewer full-length requests.
        verdict = f"yes, {r.max_concurrency:.2g} of {r.max_num_seqs} at full length"
    out["verdict"] = verdict
    if search and not out["fits"] and not r.boots:
        out["would_fit"] = would_fit(registry, profile, rig, lock, r)
    return out


def _served_on(registry: Registry, profile: Profile, rig: Rig) -> bool:
    """A bench with a decode figure, or a logged boot, of the profile as it renders (its own
    settings, engine and weights) on these cards."""
    for ev in profile.evidence:
        ran = (ev.method == "bench" and has_decode(ev)) or bool(ev.measured.boots)
        as_rendered = ev.engine is None and ev.weights is None
        differs = ev.settings.model_dump(exclude_none=True)
        if ran and as_rendered and not differs and _tier(registry, ev, rig) <= 1:
            return True
    return False


def _tier(registry: Registry, ev: Evidence, rig: Rig) -> int:
    """How far the record's rig is from the rig asked about: 0 the rig itself, 1 one of the
    same cards, 2 another."""
    if ev.rig == rig.id:
        return 0
    other = registry.rigs.get(ev.rig)
    return 1 if other is not None and same_cards(other, rig) else 2


def speed_on(registry: Registry, profile: Profile, rig: Rig) -> dict[str, Any] | None:
    """The newest measured decode speed on the rig; else on a rig of the same cards; else on
    any rig (tier 0, 1, 2: how far the figure is from the rig asked about)."""
    measured = [ev for ev in profile.evidence if has_decode(ev)]
    for wanted in (0, 1, 2):
        ev = newest([e for e in measured if _tier(registry, e, rig) == wanted])
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


def short_reason(error: str, profile: Profile) -> str:
    """The fit error's own first words: its first clause, without the profile's id."""
    text = error.removeprefix(f"{profile.id}: ").strip()
    first = text.split("; ", 1)[0].split("\n", 1)[0]
    return first if len(first) <= 120 else first[:119].rstrip() + "…"


def would_fit(
    registry: Registry, profile: Profile, rig: Rig, lock: Lock | None, asked: FitResult
) -> dict[str, Any]:
    """Where the profile does not start on the rig as it renders (`asked`, its fit there): the
    largest context (at its sequences) and the most sequences (at its context) that would, as
    fit finds them."""
    from ..fit import whatfits

    return whatfits.would_fit(
        lambda o: fit_profile(registry, profile, o, rig=rig, lock=lock), FitOptions(), asked
    ).as_dict()


def _fit_class(row: dict[str, Any]) -> int:
    """Starts as it renders, then would at a smaller context, then unknown, then does not."""
    fit = row.get("fit")
    if fit is None or fit["fits"]:
        return 0
    would = fit.get("would_fit") or {}
    if would.get("max_model_len") or would.get("max_num_seqs"):
        return 1
    return 2 if fit["fits"] is None else 3


def sort_key(row: dict[str, Any], sort: str, for_code: bool) -> tuple[Any, ...]:
    """Rows that start first; then the sort asked; ties: status (production first), this rig's
    speed, the id."""
    speed = figure(here(row), for_code)
    by_speed = (0, -speed) if speed is not None else (1, 0.0)
    status = STATUS_ORDER.get(row["status"], 8)
    tail = (status, *by_speed, row["id"])
    if sort == "context":
        return (_fit_class(row), -row["max_model_len"], -row["max_num_seqs"], *tail)
    if sort == "quality":
        q = row["quality"]
        return (_fit_class(row), *Quality(q["score"], q["figure"], q["pick"]).key(), *tail)
    return (_fit_class(row), *by_speed, status, row["id"])


def collect(registry: Registry, opts: ListOptions) -> tuple[Rig | None, list[dict[str, Any]]]:
    """The rows asked for, judged on the rig (if one is asked) and in the order asked."""
    check_filters(registry, opts)
    rig = _list_rig(registry, opts)
    rows = [dict(r, title=registry.profiles[r["id"]].title) for r in list_rows(registry)]
    rows = [r for r in rows if _wanted(registry, r, opts)]
    lock = read_lock_or_none(registry) if rig is not None else None
    for row in rows:
        profile = registry.profiles[row["id"]]
        q = quality(registry, profile, rig)
        row["uses"] = uses(profile)
        row["best_for"] = profile.best_for
        row["exposures"] = [e.issue for e in profile.exposures or []]
        row["quality"] = {"figure": q.figure, "score": q.score, "pick": q.picked}
        if rig is not None:
            row["fit"] = fit_verdict(registry, profile, rig, lock, search=opts.fits)
            row["speed"] = speed_on(registry, profile, rig)
    if opts.fits:
        rows = [r for r in rows if _fit_class(r) <= 1]
    sort = opts.sort or ("speed" if rig is not None else None)
    if sort is not None:
        rows.sort(key=lambda r: sort_key(r, sort, "coding" in opts.uses))
    return rig, rows


def run_list(registry: Registry, opts: ListOptions) -> int:
    rig, rows = collect(registry, opts)
    if opts.fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return 0
    echo_listing(registry, rig, rows, opts)
    return 0
