"""A retargeted profile (`Target`) through its engine's formulas into a `FitResult`.

vLLM and SGLang size one pool on every rank; llama.cpp splits layers over its devices and
reports the device with the least room.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ..families import fit_model
from ..lockfile.lock import Lock
from ..registry import Registry
from ..units import GIB
from . import formulas as fm
from .engine_inputs import llamacpp_inputs, sglang_inputs, vllm_inputs
from .inputs import FitError, Target, weights_estimate
from .media import vision_notes
from .options import FitResult
from .oracle import sizer_for
from .unmodelled import vllm_unmodelled


def _result(t: Target, weights_bytes: int, **values: Any) -> FitResult:
    env = t.envelope
    entry = t.engine_entry
    return FitResult(
        profile=t.profile.id,
        engine=t.engine,
        rig=t.rig.id,
        gpu=t.gpu.id,
        tp=env.tp,
        weights=t.weights,
        weights_bytes=weights_bytes,
        kv_cache_dtype=env.kv_cache_dtype or "auto",
        gpu_memory_utilization=env.gpu_memory_utilization,
        spec_n=t.spec_n,
        max_model_len=env.max_model_len,
        max_num_seqs=env.max_num_seqs,
        within_policy=t.within_policy,
        tp_capped_from=t.tp_capped_from,
        notes=list(t.notes),
        engine_id=entry.id if entry else "",
        engine_version=entry.version if entry else None,
        cards=[g.id for g in t.gpus],
        refused=list(t.refused),
        **{**values, "fits": values["fits"] and not t.refused},
    )


def _one_pool(fit: fm.VllmFit | fm.SglangFit, tp: int) -> dict[str, int]:
    """The pool fields of an engine that sizes the same pool on each of its `tp` ranks."""
    return {
        "gpus": tp,
        "kv_pool_tokens": fit.kv_pool_tokens,
        "kv_pool_bytes_per_gpu": fit.kv_pool_bytes_per_gpu,
        "kv_bytes_per_token_per_gpu": fit.kv_bytes_per_token_per_gpu,
        "kv_cache_bytes": fit.kv_pool_bytes_per_gpu * tp,
    }


def predict(registry: Registry, t: Target, lock: Lock | None = None) -> FitResult:
    try:
        if fit_model(t.engine) == "pool":
            result = _predict_vllm(registry, t, lock)
        elif fit_model(t.engine) == "static-fraction":
            result = _predict_sglang(registry, t, lock)
        else:
            result = _predict_llamacpp(registry, t, lock)
    except ValueError as exc:  # fitmath rejects a dtype or shape the registry holds
        raise FitError(f"{t.profile.id}: {exc}") from exc
    estimated = (
        None if t.weights_bytes else weights_estimate(registry, t.profile.model, t.weights, lock)
    )
    result.notes.extend([estimated] if estimated else [])
    return result


def _accounting_note(inputs: fm.VllmInputs) -> list[str]:
    """Why this release's pool differs from the other accounting's, in bytes."""
    slack, buffers = fm.allocator_slack(inputs), fm.persistent_buffers(inputs)
    if inputs.engine.non_kv_accounting == "free-memory":
        path = "after Marlin's 4-bit repack" if inputs.weight_path == "marlin4" else "of the load"
        return [
            f"free-memory accounting (vLLM >= 0.27) charges {slack / GIB:.2f} GiB of "
            f"caching-allocator slack {path} and {buffers / GIB:.2f} GiB of runner/drafter "
            "buffers allocated outside model loading; vLLM <= 0.26 charged neither"
        ]
    if buffers:
        return [
            f"torch-reserved accounting (vLLM <= 0.26) does not charge the {buffers / GIB:.2f} "
            "GiB of runner/drafter buffers allocated outside model loading (resident all the same)"
        ]
    return []


def _unloaded_note(inputs: fm.VllmInputs) -> list[str]:
    skipped = inputs.unloaded_weights_bytes
    if not skipped:
        return []
    return [
        f"the artifact's built-in MTP head ({skipped / GIB:.2f} GiB) is not loaded: vLLM "
        "loads it only as an MTP drafter"
    ]


def _predict_vllm(registry: Registry, t: Target, lock: Lock | None) -> FitResult:
    inputs = vllm_inputs(registry, t, lock)
    sizer, why_not = sizer_for(t.engine_entry, inputs.prefer_padding_sliding_window_groups)
    fit = fm.predict_vllm(inputs, sizer)
    by = fit.pool_by if sizer is not None or not why_not else f"hand formulas: {why_not}"
    notes = (*_accounting_note(inputs), *_unloaded_note(inputs), *vision_notes(inputs, fit.budget))
    t = replace(t, notes=(*t.notes, *notes))
    budget = fit.budget.as_dict()
    b = fit.budget
    per_gpu = b.total - b.free - b.desktop_reservation  # resident, as nvidia-smi counts it
    return _result(
        t,
        inputs.weights_bytes,
        **_one_pool(fit, inputs.tp),
        max_concurrency=round(fit.max_concurrency, 3),
        boots=fit.boots,
        fits=fit.fits,
        headroom_tokens=fit.headroom_tokens,
        free_bytes=fit.budget.free,
        budget=budget,
        budgets=[budget],
        accounting=inputs.engine.non_kv_accounting,
        kv_available_bytes=fit.kv_available_bytes,
        capture_sizes=fit.capture_sizes,
        used_bytes=per_gpu * inputs.tp,
        unmodelled=vllm_unmodelled(registry, t),
        pool_by=by,
    )


def _predict_llamacpp(registry: Registry, t: Target, lock: Lock | None) -> FitResult:
    inputs = llamacpp_inputs(registry, t, lock)
    fit = fm.predict_llamacpp(inputs)
    if fm.host_attention(inputs):
        note = (
            f"a default CUDA build has no flash-attention kernel for K {inputs.cache_type_k} / "
            f"V {inputs.cache_type_v}: attention runs on the CPU (slow; q4_0, q8_0 or f16 "
            "keep it on the GPU)"
        )
        t = replace(t, notes=(*t.notes, note))
    cells = math.ceil(inputs.n_ctx / fm.LLAMACPP_CTX_PADDING) * fm.LLAMACPP_CTX_PADDING
    dev = min(range(len(fit.budgets)), key=lambda i: fit.budgets[i].free)
    per_token = fit.kv_cache_bytes_per_gpu[dev] // cells
    headroom = fit.headroom_tokens
    if not fit.fits and per_token:
        headroom = -math.ceil(-fit.headroom_bytes / per_token)
    used = sum(b.total - b.free - b.desktop_reservation for b in fit.budgets)
    return _result(
        t,
        inputs.weights_bytes,
        gpus=len(inputs.gpus),
        kv_pool_tokens=cells,
        kv_pool_bytes_per_gpu=fit.kv_cache_bytes_per_gpu[dev],
        kv_bytes_per_token_per_gpu=per_token,
        kv_cache_bytes=fit.kv_cache_bytes,
        max_concurrency=round(cells / inputs.n_ctx, 3),
        boots=fit.fits,
        fits=fit.fits,
        headroom_tokens=headroom,
        free_bytes=fit.headroom_bytes,
        budget=fit.budgets[dev].as_dict(),
        budgets=[b.as_dict() for b in fit.budgets],
        used_bytes=used,
        host_weights_bytes=fit.host_weights_bytes,
    )


def _predict_sglang(registry: Registry, t: Target, lock: Lock | None) -> FitResult:
    inputs = sglang_inputs(registry, t, lock)
    fit = fm.predict_sglang(inputs)
    budget = {
        "total": inputs.gpu.cuda_total,
        "free_at_start": fit.free_at_start,
        "static_fraction": fit.static_bytes_per_gpu,
        "weights": fit.weights_per_gpu,
        "mamba_pool": fit.mamba_pool_bytes_per_gpu,
        "kv_pool": fit.kv_pool_bytes_per_gpu,
        "outside_static": fit.outside_static,
    }
    return _result(
        t,
        inputs.weights_bytes,
        **_one_pool(fit, inputs.tp),
        max_concurrency=round(fit.kv_pool_tokens / inputs.context_length, 3),
        boots=fit.kv_pool_tokens > 0,
        fits=fit.fits,
        headroom_tokens=fit.headroom_tokens,
        free_bytes=fit.outside_static,
        budget=budget,
        budgets=[budget],
        used_bytes=(inputs.gpu.cuda_total - fit.outside_static) * inputs.tp,
    )
