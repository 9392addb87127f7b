"""Predicted capacity: each profile's context x concurrency fits the KV pool its rig leaves."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, ProfilegenError, Severity
from ...fit.predict import MODELLED_ENGINES, FitOptions, FitResult, fit_profile, read_lock_or_none
from .base import CheckContext, rule

MIB = 1 << 20
GIB = 1 << 30


def _problem(r: FitResult) -> tuple[str, str] | None:
    """What does not fit (message, remedy), with the predicted figures; None when it fits."""
    if r.engine == "vllm" and r.headroom_tokens < 0:
        need = r.max_model_len * r.max_num_seqs
        boots = "" if r.boots else "; vLLM refuses to boot"
        return (
            f"predicted KV pool of {r.kv_pool_tokens:,} tokens is short of max_model_len "
            f"{r.max_model_len:,} x max_num_seqs {r.max_num_seqs} = {need:,} tokens "
            f"by {-r.headroom_tokens:,} ({r.max_concurrency:.2f}x concurrency{boots})",
            "lower max_model_len or max_num_seqs, or give the pool more memory",
        )
    if r.free_bytes >= 0:
        return None
    over = f"predicted {-r.free_bytes / MIB:,.0f} MiB over the {r.gpu}'s memory"
    if r.engine == "vllm":
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
    lock = read_lock_or_none(reg)
    for p in reg.concrete_profiles():
        if reg.engines[p.engine].kind not in MODELLED_ENGINES:
            continue
        # The profile's own file: its envelope is often inherited, but the fix lands here.
        where = reg.where("profiles", p.id, ("id",))
        try:
            result = fit_profile(reg, p, FitOptions(), lock=lock)
        except ProfilegenError as exc:
            yield ctx.finding("fit-capacity", where, f"cannot predict the fit: {exc}")
            continue
        problem = _problem(result)
        if problem:
            # A warning, not an error: some upstream profiles boot this way on purpose and
            # serve fewer full-length requests at once than max_num_seqs allows.
            message, remedy = problem
            hint = f"{remedy}; see `profilegen fit {p.id}`"
            yield ctx.finding("fit-capacity", where, message, hint=hint)
