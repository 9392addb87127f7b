"""llama.cpp: the KV buffer it allocates and the per-GPU budget of a layer split."""

from __future__ import annotations

from dataclasses import dataclass

from .common import (
    ACT_HIDDEN_COPIES,
    ACT_INTERMEDIATE_COPIES,
    LLAMACPP_CTX_PADDING,
    LLAMACPP_MMPROJ_COMPUTE_BYTES,
    LLAMACPP_STATE_DTYPE_BYTES,
    cdiv,
    llamacpp_row_bytes,
)
from .layers import ffn_width, gdn_prefill_scratch_bytes
from .shapes import LlamaCppFit, LlamaCppGpuBudget, LlamaCppInputs, ModelShape

# --- llama.cpp ----------------------------------------------------------------------------


def llamacpp_kv_bytes_per_token(shape: ModelShape, cache_type_k: str, cache_type_v: str) -> int:
    """K+V bytes per token of one full-attention layer: ggml_row_size over n_embd_k/v_gqa."""
    row = shape.num_kv_heads * shape.head_dim
    return llamacpp_row_bytes(cache_type_k, row) + llamacpp_row_bytes(cache_type_v, row)


def llamacpp_swa_bytes_per_token(shape: ModelShape, cache_type_k: str, cache_type_v: str) -> int:
    """K+V bytes per cell of one sliding-window layer (its own heads and head size)."""
    row = shape.window_kv_heads * shape.window_head_dim
    return llamacpp_row_bytes(cache_type_k, row) + llamacpp_row_bytes(cache_type_v, row)


def llamacpp_swa_cells(inputs: LlamaCppInputs, n_ctx: int) -> int:
    """Cells of the SWA cache (llama_kv_cache_iswa): the window per sequence plus a ubatch."""
    shape = inputs.shape
    if inputs.swa_full or not shape.sliding_window:
        return n_ctx
    cells = shape.sliding_window * inputs.n_parallel + inputs.n_ubatch
    return min(n_ctx, cdiv(cells, LLAMACPP_CTX_PADDING) * LLAMACPP_CTX_PADDING)


def llamacpp_recurrent_state_bytes(shape: ModelShape) -> int:
    """One recurrent layer's r (conv) + s (SSM) state per sequence, f32 (GDN or Mamba-2)."""
    if shape.mamba2_layers and not shape.linear_num_value_heads:
        inner = shape.mamba2_heads * shape.mamba2_head_dim
        r = (shape.mamba2_conv_kernel - 1) * (inner + 2 * shape.mamba2_groups * shape.mamba2_state)
        s = inner * shape.mamba2_state
        return (r + s) * LLAMACPP_STATE_DTYPE_BYTES
    conv_dim = (
        2 * shape.linear_num_key_heads * shape.linear_key_head_dim
        + shape.linear_num_value_heads * shape.linear_value_head_dim
    )
    r = (shape.linear_conv_kernel - 1) * conv_dim
    s = shape.linear_num_value_heads * shape.linear_key_head_dim * shape.linear_value_head_dim
    return (r + s) * LLAMACPP_STATE_DTYPE_BYTES


def llamacpp_layer_devices(
    n_layer: int, n_devices: int, split: tuple[float, ...] | None, n_gpu_layers: int = 999
) -> list[int]:
    """Device of each repeating layer under -sm layer (-1: kept on the CPU).

    llama.cpp offloads the LAST n_gpu_layers layers and places offloaded layer il on the
    first device whose cumulative split exceeds (il - first_gpu_layer) / offloaded, the
    output layer counting as one more layer -- so two equal cards get layers 0-32 and
    33-63 (+ output) of a 64-layer model.
    """
    weights = list(split) if split else [1.0] * n_devices
    if len(weights) != n_devices or sum(weights) <= 0:
        raise ValueError("tensor_split must have one positive weight per GPU")
    cumulative: list[float] = []
    acc = 0.0
    for w in weights:
        acc += w
        cumulative.append(acc / sum(weights))
    offloaded = min(n_gpu_layers, n_layer + 1)
    first_gpu = n_layer + 1 - offloaded
    devices = []
    for il in range(n_layer):
        if il < first_gpu:
            devices.append(-1)
            continue
        pos = (il - first_gpu) / offloaded
        devices.append(next(i for i, c in enumerate(cumulative) if c > pos))
    return devices


def _llamacpp_compute_bytes(inputs: LlamaCppInputs, n_ctx: int, holds_output: bool) -> int:
    """Compute buffer of one device, sized by llama.cpp's worst-case reserve graph."""
    shape = inputs.shape
    ub = inputs.n_ubatch
    # With flash attention only the f16 KQ mask is materialised; without it, one layer's
    # f32 KQ scores over every head are.
    heads = 1 if inputs.flash_attn else shape.num_attention_heads * 2
    attn = n_ctx * ub * 2 * heads
    act = ub * (ACT_HIDDEN_COPIES * shape.hidden_size + ACT_INTERMEDIATE_COPIES * ffn_width(shape))
    act *= 4  # llama.cpp computes activations in f32
    act += gdn_prefill_scratch_bytes(shape, 1, ub) * 2  # f32 scratch
    logits = shape.vocab_size * ub * 4 if holds_output else 0
    return attn + act + logits


@dataclass(frozen=True)
class _LayerCounts:
    all: tuple[int, ...]
    kv: tuple[int, ...]
    linear: tuple[int, ...]
    swa: tuple[int, ...]


def _llamacpp_layer_counts(inputs: LlamaCppInputs) -> _LayerCounts:
    shape = inputs.shape
    n_dev = len(inputs.gpus)
    devices = llamacpp_layer_devices(
        shape.num_layers, n_dev, inputs.tensor_split, inputs.n_gpu_layers
    )
    kv_set = set(shape.kv_layer_indices())
    swa_set = set(shape.sliding_layer_indices())
    state_layers = shape.num_state_layers
    all_l, kv_l, lin_l, swa_l = [0] * n_dev, [0] * n_dev, [0] * n_dev, [0] * n_dev
    for il, dev in enumerate(devices):
        if dev < 0:
            continue  # a CPU layer keeps its weights, KV and state in host memory
        all_l[dev] += 1
        if il in kv_set:
            kv_l[dev] += 1
        elif il in swa_set:
            swa_l[dev] += 1
        elif state_layers:
            lin_l[dev] += 1
    if shape.mamba2_layers:  # Mamba-2 hybrids interleave MoE layers without any state
        total = sum(lin_l) or 1
        lin_l = [round(n * shape.mamba2_layers / total) for n in lin_l]
    return _LayerCounts(tuple(all_l), tuple(kv_l), tuple(lin_l), tuple(swa_l))


def _llamacpp_gpu_budget(
    inputs: LlamaCppInputs, dev: int, counts: _LayerCounts, n_ctx: int, draft_kv: int
) -> LlamaCppGpuBudget:
    shape = inputs.shape
    gpu = inputs.gpus[dev]
    # The output layer (and the MTP nextn layers after it) follow the last repeating
    # layer onto the last GPU, but only once every layer is offloaded.
    last = dev == len(inputs.gpus) - 1 and inputs.n_gpu_layers > shape.num_layers
    per_token = llamacpp_kv_bytes_per_token(shape, inputs.cache_type_k, inputs.cache_type_v)
    body = inputs.weights_bytes - inputs.cpu_resident_bytes - inputs.output_bytes
    weights = body * counts.all[dev] // shape.num_layers + (inputs.output_bytes if last else 0)
    kv = counts.kv[dev] * per_token * n_ctx + (draft_kv if last else 0)
    swa_tok = llamacpp_swa_bytes_per_token(shape, inputs.cache_type_k, inputs.cache_type_v)
    kv += counts.swa[dev] * swa_tok * llamacpp_swa_cells(inputs, n_ctx)
    rs = counts.linear[dev] * llamacpp_recurrent_state_bytes(shape) * inputs.n_parallel
    mmproj = 0
    if dev == 0 and inputs.mmproj_bytes and inputs.mmproj_on_gpu:
        mmproj = inputs.mmproj_bytes + LLAMACPP_MMPROJ_COMPUTE_BYTES
    compute = _llamacpp_compute_bytes(inputs, n_ctx, last)
    if inputs.mtp_draft and last:
        # The draft-mtp context reserves its own worst-case graph next to the target's.
        compute += _llamacpp_compute_bytes(inputs, n_ctx, True)
    overhead = inputs.constants.llamacpp_runtime_overhead
    used = weights + kv + rs + mmproj + compute + overhead
    desktop = gpu.desktop_reservation_bytes
    return LlamaCppGpuBudget(
        total=gpu.vram_bytes,
        weights=weights,
        kv_cache=kv,
        recurrent_state=rs,
        mmproj=mmproj,
        compute_buffer=compute,
        runtime_overhead=overhead,
        desktop_reservation=desktop,
        free=gpu.vram_bytes - used - desktop,
    )


def predict_llamacpp(inputs: LlamaCppInputs) -> LlamaCppFit:
    """Predict llama.cpp's KV buffer and per-GPU budget for a (layer-split) launch."""
    shape = inputs.shape
    if not inputs.gpus or inputs.n_ctx < 1 or inputs.n_parallel < 1:
        raise ValueError("need at least one GPU, a positive n_ctx and n_parallel")
    # The KV buffer holds n_ctx cells in total (split between the n_parallel sequences).
    n_ctx = cdiv(inputs.n_ctx, LLAMACPP_CTX_PADDING) * LLAMACPP_CTX_PADDING
    per_token = llamacpp_kv_bytes_per_token(shape, inputs.cache_type_k, inputs.cache_type_v)
    counts = _llamacpp_layer_counts(inputs)
    draft_kv = shape.mtp_layers * per_token * n_ctx if inputs.mtp_draft else 0
    budgets = tuple(
        _llamacpp_gpu_budget(inputs, dev, counts, n_ctx, draft_kv)
        for dev in range(len(inputs.gpus))
    )
    dev = min(range(len(budgets)), key=lambda i: budgets[i].free)
    tightest = budgets[dev]
    # One more cell of context costs this GPU's KV rows plus a row of the f16 mask.
    marginal = (counts.kv[dev] + (shape.mtp_layers if inputs.mtp_draft else 0)) * per_token
    marginal += inputs.n_ubatch * 2 if inputs.flash_attn else 0
    headroom_tokens = tightest.free // marginal if marginal and tightest.free > 0 else 0
    state = llamacpp_recurrent_state_bytes(shape) if shape.num_state_layers else 0
    kv_per_gpu = tuple(b.kv_cache for b in budgets)
    return LlamaCppFit(
        kv_cache_bytes=sum(kv_per_gpu),
        kv_cache_bytes_per_gpu=kv_per_gpu,
        kv_bytes_per_token=per_token * shape.num_kv_layers,
        drafter_kv_bytes=draft_kv,
        recurrent_state_bytes=state * shape.num_state_layers * inputs.n_parallel,
        budgets=budgets,
        fits=all(b.free >= 0 for b in budgets),
        headroom_bytes=tightest.free,
        headroom_tokens=int(headroom_tokens),
    )
