"""Fit results for people: the per-GPU budget table, the verdict and the calibration table."""

from __future__ import annotations

from .calibrate import TOLERANCE, CalibrationPoint
from .predict import GIB, MIB, FitResult

_VLLM_ROWS = (
    ("total", "total (CUDA view)", 0),
    ("claimed_by_util", "claimed by util", 0),
    ("weights", "weights", 1),
    ("drafter", "drafter", 1),
    ("activations", "activations", 1),
    ("cuda_graphs", "CUDA graphs", 1),
    ("runtime_overhead", "runtime overhead", 1),
    ("kv_pool", "KV pool", 1),
    ("desktop_reservation", "desktop reservation", 0),
    ("unaccounted", "outside vLLM (context, graphs)", 0),
    ("free", "free", 0),
)
_LLAMACPP_ROWS = (
    ("total", "total", 0),
    ("weights", "weights", 1),
    ("kv_cache", "KV cache", 1),
    ("recurrent_state", "recurrent state", 1),
    ("mmproj", "projector", 1),
    ("compute_buffer", "compute buffers", 1),
    ("runtime_overhead", "runtime overhead", 1),
    ("desktop_reservation", "desktop reservation", 0),
    ("free", "free", 0),
)


def _gib(n: int) -> str:
    return f"{n / GIB:.2f}"


def format_text(r: FitResult) -> str:
    util = "" if r.gpu_memory_utilization is None else f", util {r.gpu_memory_utilization}"
    lines = [
        f"{r.profile}: {r.engine}, TP {r.tp} on {r.rig} ({r.gpus} x {r.gpu})",
        f"weights {r.weights} ({r.weights_bytes / 1e9:.2f} GB), {r.kv_cache_dtype} KV{util}"
        f", spec n={r.spec_n}",
        "",
    ]
    rows = _VLLM_ROWS if r.engine == "vllm" else _LLAMACPP_ROWS
    heads = ["per GPU"] if r.engine == "vllm" else [f"GPU {i}" for i in range(len(r.budgets))]
    lines.append(f"{'GiB':<34}" + "".join(f"{h:>9}" for h in heads))
    for key, label, depth in rows:
        cells = "".join(f"{_gib(b[key]):>9}" for b in r.budgets)
        lines.append(f"{'  ' * depth + label:<34}{cells}")
    if r.engine == "vllm":
        need = r.max_model_len * r.max_num_seqs
        why = f"max_model_len {r.max_model_len:,} x {r.max_num_seqs} seq"
    else:  # llama.cpp's -c is one buffer that the slots share
        need, why = r.max_model_len, f"-c {r.max_model_len:,} shared by {r.max_num_seqs} slot(s)"
    lines += [
        "",
        f"KV pool   {r.kv_pool_tokens:>11,} tokens  "
        f"({r.kv_bytes_per_token_per_gpu:,} B per token per GPU)",
        f"needs     {need:>11,} tokens  ({why})",
        "verdict   " + _verdict(r),
    ]
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def _verdict(r: FitResult) -> str:
    if r.fits:
        return f"FITS, {r.headroom_tokens:,} tokens of headroom"
    if r.engine == "vllm" and not r.boots:
        return f"DOES NOT BOOT: one {r.max_model_len:,}-token request exceeds the pool"
    if r.free_bytes < 0:
        return f"DOES NOT FIT: {(-r.free_bytes) / MIB:,.0f} MiB over the card's memory"
    return (
        f"DOES NOT FIT: {-r.headroom_tokens:,} tokens short "
        f"({r.max_concurrency:.2f} of {r.max_num_seqs} full-length requests)"
    )


def format_calibration(points: list[CalibrationPoint]) -> str:
    lines = [
        f"{'profile':<34}{'evidence':<16}{'quantity':<17}{'measured':>15}{'predicted':>15}  error"
    ]
    for p in points:
        mark = "ok" if p.within else "DRIFT"
        mark = mark if p.counted else "not counted"
        lines.append(
            f"{p.profile:<34}{f'#{p.evidence} {p.date}':<16}{p.quantity:<17}"
            f"{p.measured:>15,}{p.predicted:>15,}  {p.error:+.1%} {mark}"
        )
    bad = [p for p in points if p.counted and not p.within]
    verdict = f"{len(bad)} outside" if bad else "all within"
    lines.append(f"calibration: {len(points)} points, {verdict} ±{TOLERANCE:.0%}")
    return "\n".join(lines)
