"""Predicted memory fit: what each profile's rig leaves for its KV pool, and its evidence.

`check` judges offline: it never starts vLLM's own sizing code (a probe run of the release's
environment, fit/oracle.py), so a check stays fast and runs on a machine without that
environment; vLLM pools are the hand formulas', which the suite holds to vLLM 0.27.1's own
answers on every profile of that release (docs/FIT.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...errors import Finding, ProfilegenError, Severity, Value
from ...families import fit_model
from ...fit.calibrate import TOLERANCE, check_names, unpredictable
from ...fit.predict import FitOptions, FitResult, fit_profile
from ...model import Profile
from ...units import GIB, MIB
from .base import CheckContext, rule

# What a fit is computed from: a finding of fit on a profile says nothing more where one of
# these values is already reported (a TP the rig cannot hold, a context past the model's).
FIT_READS = (
    ("envelope",),
    ("weights",),
    ("drafter",),
)

# A caveat that owns up to a profile not booting where it is declared.
ACKNOWLEDGED = re.compile(
    r"\b(cannot|can't|does not|doesn't|won't|will not|not to|never)\s+(boot|fit)\b", re.I
)


def _fits(ctx: CheckContext) -> dict[str, FitResult | str]:
    """Every modelled profile fitted once per check, shared by the rules below."""
    return ctx.shared(_fit_all)


def _fit_all(ctx: CheckContext) -> dict[str, FitResult | str]:
    reg = ctx.registry
    lock = ctx.usable_lock
    out: dict[str, FitResult | str] = {}
    for p in reg.concrete_profiles():
        if fit_model(reg.engines[p.engine].kind) is None:
            continue
        try:
            out[p.id] = fit_profile(reg, p, FitOptions(), lock=lock)
        except ProfilegenError as exc:
            out[p.id] = str(exc)
    return out


def _problem(r: FitResult, why_it_may_boot: str = "") -> tuple[str, str] | None:
    """What does not fit (message, remedy), with the predicted figures; None when it fits.
    `why_it_may_boot`: what says otherwise where fit predicts that the engine refuses."""
    if fit_model(r.engine) != "layer-split" and r.headroom_tokens < 0:
        need = r.max_model_len * r.max_num_seqs
        boots = "" if r.boots else f"; fit predicts the engine refuses to boot{why_it_may_boot}"
        return (
            f"predicted KV pool of {r.kv_pool_tokens:,} tokens is short of max_model_len "
            f"{r.max_model_len:,} x max_num_seqs {r.max_num_seqs} = {need:,} tokens "
            f"by {-r.headroom_tokens:,} ({r.max_concurrency:.2f}x concurrency{boots})",
            "lower max_model_len or max_num_seqs, or give the pool more memory",
        )
    if r.free_bytes >= 0:
        return None
    over = f"predicted {-r.free_bytes / MIB:,.0f} MiB over the {r.gpu}'s memory"
    if fit_model(r.engine) == "pool":
        b = r.budget
        return (
            f"{over}: utilization {r.gpu_memory_utilization} claims "
            f"{b['claimed_by_util'] / GIB:.2f} GiB and {b['unaccounted'] / GIB:.2f} GiB "
            "lands outside it (CUDA context, unreserved V2 CUDA graphs)",
            "lower gpu_memory_utilization or reserve the graphs (cudagraph_mem_mib)",
        )
    return (
        f"{over} with {r.kv_cache_dtype} KV at {r.max_model_len:,} tokens",
        "lower the context, use a smaller KV type or move a buffer off the GPU",
    )


@rule(
    "fit-capacity",
    "max_model_len x max_num_seqs fits the KV pool predicted on the profile's rig",
    Severity.WARNING,
)
def capacity(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for pid, result in _fits(ctx).items():
        if reg.profiles[pid].status == "retired":
            continue  # not served: what it would need is nobody's to fix
        # The profile's own file: its envelope is often inherited, but the fix lands here.
        where = reg.where("profiles", pid, ("id",))
        if isinstance(result, str):
            yield ctx.report(where, f"cannot predict the fit: {result}", follows=_reads(ctx, pid))
            continue
        profile = reg.profiles[pid]
        problem = _problem(result, _why_it_may_boot(profile, result))
        if problem and not boot_error(profile, result):  # fit-boots says it, once
            # A warning, not an error: some upstream profiles boot this way on purpose and
            # serve fewer full-length requests at once than max_num_seqs allows.
            message, remedy = problem
            hint = f"{remedy}; see `profilegen fit {pid}`"
            yield ctx.report(where, message, hint=hint, follows=_reads(ctx, pid))


def _why_it_may_boot(p: Profile, r: FitResult) -> str:
    """Why a predicted refusal is a warning here rather than a `fit-boots` error."""
    if ran_on_its_rig(p):
        return f", yet it was seen serving on {p.rig}: a boot there at these settings decides"
    if _acknowledged(p):
        return ", as its caveats say"
    if cannot_boot(r) is not None:
        return f", short by less than fit's {TOLERANCE:.0%} error: a boot on the rig decides"
    return ""


def _reads(ctx: CheckContext, profile_id: str) -> list[Value]:
    return [ctx.at(profile_id, *node) for node in FIT_READS]


def cannot_boot(r: FitResult) -> str | None:
    """Why fit predicts the profile cannot boot, beyond the model's own error; else None.

    The engine's own start-up check must fail and the pool fall short of one max_model_len
    request by more than the calibration tolerance (or the resident memory exceed the card
    by as much): a shortfall inside the model's error is a warning (`fit-capacity`).
    """
    short = r.kv_pool_tokens < (1 - TOLERANCE) * r.max_model_len
    if fit_model(r.engine) != "layer-split" and not r.boots:
        close = "" if short else f", within fit's {TOLERANCE:.0%}: a boot on the rig decides"
        return (
            f"fit predicts it cannot boot on {r.rig}: a KV pool of {r.kv_pool_tokens:,} "
            f"tokens for one {r.max_model_len:,}-token request ({r.max_concurrency:.2f}x{close})"
        )
    total = r.budget.get("total", 0)
    if r.free_bytes < -TOLERANCE * total:
        return (
            f"fit predicts it cannot boot on {r.rig}: {-r.free_bytes / MIB:,.0f} MiB more "
            f"than the {r.gpu} holds"
        )
    return None


def ran_on_its_rig(p: Profile) -> bool:
    """Evidence that the profile served on its own rig: a bench there, or a logged boot."""
    return any(ev.rig == p.rig and (ev.method == "bench" or ev.measured.boots) for ev in p.evidence)


def boot_error(p: Profile, r: FitResult) -> str | None:
    """Why a profile in service fails `fit-boots`: predicted not to boot, not said in its
    caveats, and not seen running on its rig (there the prediction is what is wrong, and
    `fit-capacity` says so)."""
    if p.status == "retired" or _acknowledged(p) or ran_on_its_rig(p):
        return None
    return cannot_boot(r)


def _acknowledged(p: Profile) -> bool:
    return any(ACKNOWLEDGED.search(c) for c in p.caveats)


@rule(
    "fit-boots",
    "a profile in service that fit predicts cannot boot on its rig, and has not been seen "
    "running there, says so in its caveats",
    Severity.ERROR,
)
def boots(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for pid, result in _fits(ctx).items():
        profile = reg.profiles[pid]
        if isinstance(result, str) or profile.status == "retired":
            continue
        why = boot_error(profile, result)
        if why:
            where = reg.where("profiles", pid, ("caveats",))
            hint = (
                "fix the envelope, or add a caveat saying it does not boot there "
                f"(see `profilegen fit {pid}`)"
            )
            yield ctx.report(where, why, hint=hint, follows=_reads(ctx, pid))


@rule(
    "fit-evidence",
    "evidence keys are unique, name known fit constants, and fit can predict every boot",
    Severity.ERROR,
)
def evidence(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for profile_id, index, message in check_names(reg):
        where = reg.where("profiles", profile_id, ("evidence", index))
        yield ctx.report(where, message)
    for rec, why in unpredictable(reg, ctx.usable_lock):
        where = reg.where("profiles", rec.profile, ("evidence", rec.index))
        yield ctx.report(
            where,
            f"{rec.name}: fit cannot predict this boot: {why}",
            follows=_reads(ctx, rec.profile),
        )
