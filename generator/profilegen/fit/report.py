"""Fit results for people: the per-GPU budget table, the verdict and the calibration tables."""

from __future__ import annotations

from ..families import fit_model
from ..units import GIB, MIB
from .calibrate import BOOTS, CalibrationPoint
from .fromlog import LogFit
from .options import FitResult
from .refit import ConstantCheck

_VLLM_ROWS = (
    ("total", "total (CUDA view)", 0),
    ("claimed_by_util", "claimed by util", 0),
    ("weights", "weights", 1),
    ("drafter", "drafter", 1),
    ("activations", "activations", 1),
    ("cuda_graphs", "CUDA graphs", 1),
    ("runtime_overhead", "runtime overhead", 1),
    ("profiler_extra", "profiler extra", 1),
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
_SGLANG_ROWS = (
    ("total", "total (CUDA view)", 0),
    ("free_at_start", "free at start-up", 0),
    ("static_fraction", "static fraction", 1),
    ("weights", "weights", 2),
    ("mamba_pool", "recurrent-state pool", 2),
    ("kv_pool", "KV pool", 2),
    ("outside_static", "left for activations, graphs", 1),
)
ACCOUNTING = {
    "torch-reserved": "non-KV = weights + non-torch growth + activation peak (vLLM <= 0.26)",
    "free-memory": "non-KV = drop in free memory + transient peak (vLLM >= 0.27): also "
    "charges allocator slack and buffers allocated outside model loading",
}


def _gib(n: int) -> str:
    return f"{n / GIB:.2f}"


def _rows(r: FitResult) -> tuple[tuple[str, str, int], ...]:
    if fit_model(r.engine) == "pool":
        return _VLLM_ROWS
    return _SGLANG_ROWS if fit_model(r.engine) == "static-fraction" else _LLAMACPP_ROWS


def _header(r: FitResult) -> list[str]:
    util = "" if r.gpu_memory_utilization is None else f", util {r.gpu_memory_utilization}"
    version = f" {r.engine_version}" if r.engine_version else ""
    cards = f"{r.gpus} x {r.gpu}"
    if len(set(r.cards)) > 1:
        cards = " + ".join(r.cards) + f", sized by the {r.gpu}"
    lines = [
        f"{r.profile}: {r.engine}{version} ({r.engine_id}), TP {r.tp} on {r.rig} ({cards})",
        f"weights {r.weights} ({r.weights_bytes / 1e9:.2f} GB), {r.kv_cache_dtype} KV{util}"
        f", spec n={r.spec_n}",
    ]
    if r.accounting:
        lines.append(f"accounting: {r.accounting} ({ACCOUNTING[r.accounting]})")
    return [*lines, ""]


def format_text(r: FitResult) -> str:
    lines = _header(r)
    heads = (
        ["per GPU"]
        if fit_model(r.engine) != "layer-split"
        else [f"GPU {i}" for i in range(len(r.budgets))]
    )
    lines.append(f"{'GiB':<34}" + "".join(f"{h:>9}" for h in heads))
    for key, label, depth in _rows(r):
        cells = "".join(f"{_gib(b[key]):>9}" for b in r.budgets)
        lines.append(f"{'  ' * depth + label:<34}{cells}")
    if fit_model(r.engine) == "layer-split":  # llama.cpp's -c is one buffer that the slots share
        need, why = r.max_model_len, f"-c {r.max_model_len:,} shared by {r.max_num_seqs} slot(s)"
    else:
        need = r.max_model_len * r.max_num_seqs
        why = f"max_model_len {r.max_model_len:,} x {r.max_num_seqs} seq"
    lines += [
        "",
        f"KV pool   {r.kv_pool_tokens:>11,} tokens  "
        f"({r.kv_bytes_per_token_per_gpu:,} B per token per GPU)",
        f"needs     {need:>11,} tokens  ({why})",
        "verdict   " + _verdict(r),
    ]
    lines += _would_fit(r)
    if r.pool_by:
        lines.append(f"pool by   {r.pool_by}")
    lines += [f"unmodelled: {u.why}" for u in r.unmodelled]
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


_UNITS = {
    "kv_pool_tokens": "tokens",
    "kv_buffer_bytes": "B of KV buffer",
    "peak_vram_mib": "MiB in use",
}


def format_evidence(
    points: list[CalibrationPoint], unpredictable: list[tuple[str, str]]
) -> list[str]:
    """The profile's own measured boots, each predicted at the settings it was measured at."""
    if not points and not unpredictable:
        return []
    lines = ["", "measured boots of this profile (each predicted at its own settings):"]
    for p in points:
        if p.quantity == BOOTS:
            lines.append(
                f"  {p.key}  {p.date} {p.engine} on {p.rig}: {_boot(p.measured)}, "
                f"fit says it {_boot(p.predicted)} ({p.status})"
            )
            continue
        unit = _UNITS.get(p.quantity, p.quantity)
        lines.append(
            f"  {p.key}  {p.date} {p.engine} on {p.rig}: {p.measured:,} {unit} measured, "
            f"{p.predicted:,} predicted ({p.error:+.1%}, {p.status})"
        )
    lines += [f"  {key}  cannot be predicted: {why}" for key, why in unpredictable]
    return lines


def _would_fit(r: FitResult) -> list[str]:
    """What would fit, when the profile does not."""
    w = r.would_fit
    if not w:
        return []
    if w.get("why_not"):
        return [f"would fit nothing: {w['why_not']}"]
    lines = []
    context, seqs = w.get("max_model_len"), w.get("max_num_seqs")
    if isinstance(context, int):
        at = r.max_num_seqs if seqs is None or context < r.max_model_len else 1
        lines.append(f"would fit max_model_len {context:,} at {at} seq (--max-model-len {context})")
    if isinstance(seqs, int) and seqs < r.max_num_seqs:
        lines.append(
            f"would fit {seqs} seq at max_model_len {r.max_model_len:,} (--max-num-seqs {seqs})"
        )
    return lines


def _verdict(r: FitResult) -> str:
    if r.refused:
        return "REFUSED: the container will not boot: " + "; ".join(r.refused)
    if r.fits:
        return f"FITS, {r.headroom_tokens:,} tokens of headroom"
    if fit_model(r.engine) != "layer-split" and not r.boots:
        return f"DOES NOT BOOT: one {r.max_model_len:,}-token request exceeds the pool"
    if r.free_bytes < 0:
        return f"DOES NOT FIT: {(-r.free_bytes) / MIB:,.0f} MiB over the card's memory"
    return (
        f"DOES NOT FIT: {-r.headroom_tokens:,} tokens short "
        f"({r.max_concurrency:.2f} of {r.max_num_seqs} full-length requests)"
    )


def _boot(verdict: int) -> str:
    return "boots" if verdict else "refused"


def format_calibration(points: list[CalibrationPoint], title: str = "calibration") -> str:
    # Columns as wide as their longest entry (a llama.cpp boot's terms have long keys).
    key = max([34, *(len(p.key) + 1 for p in points)])
    engine = max([27, *(len(p.engine) + 1 for p in points)])
    quantity = max([16, *(len(p.quantity) + 1 for p in points)])
    lines = [
        f"{'record':<{key}}{'engine':<{engine}}{'quantity':<{quantity}}{'measured':>15}"
        f"{'predicted':>15}   error  status"
    ]
    for p in points:
        tol = f" (±{p.tolerance:.0%})" if p.tolerance != 0.05 else ""
        extra = f" [{', '.join(p.fitted)}]" if p.fitted else ""
        extra += " *" if p.pool_by and p.pool_by.startswith("vLLM") else ""
        figures = (
            f"{_boot(p.measured):>15}{_boot(p.predicted):>15}  {'':>6}"
            if p.quantity == BOOTS
            else f"{p.measured:>15,}{p.predicted:>15,}  {p.error:+6.1%}"
        )
        lines.append(
            f"{p.key:<{key}}{p.engine:<{engine}}{p.quantity:<{quantity}}{figures}"
            f"  {p.status}{tol if p.quantity != BOOTS else ''}{extra}"
        )
    counted = [p for p in points if p.counted and not p.fitted and not p.sole]
    off = [p for p in points if p.off]
    fitted = sum(1 for p in points if p.counted and (p.fitted or p.sole))
    skipped = sum(1 for p in points if not p.counted)
    verdict = f"{len(off)} off" if off else "all within tolerance"
    lines.append(
        f"{title}: {len(counted)} predictions ({verdict}), {fitted} fitted, {skipped} not counted"
    )
    return "\n".join([*lines, *_pool_footer(points)])


def _pool_footer(points: list[CalibrationPoint]) -> list[str]:
    """Which code sized the vLLM pools: the release's own (marked *) or the formulas."""
    pools = [p for p in points if p.pool_by]
    own = sorted({p.pool_by for p in pools if p.pool_by and p.pool_by.startswith("vLLM")})
    hand = sorted({p.pool_by for p in pools if p.pool_by and not p.pool_by.startswith("vLLM")})
    out = [f"* pool sized by {by}" for by in own]
    out += [f"pool sized by {by}" for by in hand]
    return out


def _size(n: float) -> str:
    return f"{n / MIB:,.0f} MiB" if abs(n) >= MIB else f"{n / 1024:,.0f} KiB"


def format_constants(checks: list[ConstantCheck]) -> str:
    lines = [f"{'constant':<34}{'stored':>12}{'refit':>12}  fitted to"]
    for c in checks:
        mark = "  STALE (update the stored value)" if c.stale else ""
        where = ", ".join(c.points) or "(no record)"
        lines.append(f"{c.name:<34}{_size(c.stored):>12}{_size(c.refit):>12}  {where}{mark}")
    return "\n".join(lines)


def _value(n: float, unit: str) -> str:
    if unit == "bytes":
        return f"{n / GIB:.2f} GiB"
    return f"{n:.2f}x" if unit == "x" else f"{n:,.0f}"


def format_log_fit(fit: LogFit) -> str:
    log, r = fit.log, fit.result
    version = f" {log.version}" if log.version else ""
    lines = [
        f"log: {log.engine}{version} -> profile {fit.profile} on {fit.engine}, rig {r.rig}",
    ]
    if fit.settings:
        shown = ", ".join(f"{k}={v}" for k, v in fit.settings.items())
        lines.append(f"settings that differ from the profile: {shown}")
    if r.accounting:
        lines.append(f"accounting: {r.accounting} ({ACCOUNTING[r.accounting]})")
    lines += ["", f"{'term':<26}{'predicted':>16}{'measured':>16}   error"]
    for t in fit.terms:
        lines.append(
            f"{t.name:<26}{_value(t.predicted, t.unit):>16}{_value(t.measured, t.unit):>16}"
            f"  {t.error:+6.1%}"
        )
    if not fit.terms:
        lines.append("(the log states no figure fit predicts)")
    lines += [f"note: {n}" for n in fit.notes]
    return "\n".join(lines)
