"""llama.cpp: the KV buffer it allocates and the per-GPU budget of a layer split."""

from __future__ import annotations

from dataclasses import dataclass

from .common import (
    LLAMACPP_CTX_PADDING,
    LLAMACPP_CUDA_FA_TYPES,
    LLAMACPP_HOST_ATTENTION_FFN_COPIES,
    LLAMACPP_MMPROJ_COMPUTE_BYTES,
    LLAMACPP_STATE_DTYPE_BYTES,
    cdiv,
    llamacpp_row_bytes,
)
from .layers import ffn_width
from .llamacpp_weights import place_weights
from .shapes import LlamaCppFit, LlamaCppGpuBudget, LlamaCppInputs, ModelShape

# --- llama.cpp ----------------------------------------------------------------------------
F16_BYTES, F32_BYTES = 2, 4


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


def host_attention(inputs: LlamaCppInputs) -> bool:
    """Whether CUDA's flash attention has no kernel for the cache types: it runs on the CPU."""
    types = {inputs.cache_type_k.lower(), inputs.cache_type_v.lower()}
    cuda = inputs.backend == "cuda" and inputs.flash_attn
    return cuda and not types <= LLAMACPP_CUDA_FA_TYPES


def _dequantized_kv_bytes(
    inputs: LlamaCppInputs, n_ctx: int, counts: _LayerCounts, dev: int
) -> int:
    """CUDA's flash attention reads an f16 K and V: a quantized cache is converted, one
    layer's whole context at a time (the largest layer kind on the device)."""
    if inputs.backend != "cuda":
        return 0
    shape = inputs.shape
    kinds = []
    if counts.kv[dev]:
        kinds.append((n_ctx, shape.num_kv_heads * shape.head_dim))
    if counts.swa[dev]:
        kinds.append(
            (llamacpp_swa_cells(inputs, n_ctx), shape.window_kv_heads * shape.window_head_dim)
        )
    copies = sum(1 for t in (inputs.cache_type_k, inputs.cache_type_v) if t.lower() != "f16")
    return max((cells * width * F16_BYTES * copies for cells, width in kinds), default=0)


def _graph_bytes(inputs: LlamaCppInputs, n_ctx: int, swa: bool, outputs: int) -> int:
    """One context's worst-case graph without the cache conversion: the f16 attention mask
    (one per window kind), the feed-forward activations (gate and up, f32) and the logits."""
    shape = inputs.shape
    ub = inputs.n_ubatch
    if inputs.flash_attn:
        attn = n_ctx * ub * F16_BYTES
        if swa:
            attn += llamacpp_swa_cells(inputs, n_ctx) * ub * F16_BYTES
    else:  # one layer's f32 attention scores over every head
        attn = n_ctx * ub * shape.num_attention_heads * F32_BYTES
    act = ub * 2 * ffn_width(shape) * F32_BYTES
    return attn + act + outputs * shape.vocab_size * F32_BYTES


def _llamacpp_compute_bytes(
    inputs: LlamaCppInputs, n_ctx: int, counts: _LayerCounts, dev: int, holds_output: bool
) -> int:
    """Compute buffer of one device, sized by llama.cpp's worst-case reserve graph.

    llama-server reserves logits for n_parallel x (1 + draft tokens) outputs; the draft-mtp
    context reserves a graph of its own beside the target's (an f16 cache: no conversion).
    """
    drafting = inputs.mtp_draft and inputs.spec_n > 0
    outputs = inputs.n_parallel * (1 + (inputs.spec_n if drafting else 0)) if holds_output else 0
    swa = bool(counts.swa[dev])
    if host_attention(inputs):  # no mask or cache conversion on the GPU
        act = inputs.n_ubatch * LLAMACPP_HOST_ATTENTION_FFN_COPIES * ffn_width(inputs.shape)
        total = int(act) * F32_BYTES + outputs * inputs.shape.vocab_size * F32_BYTES
    else:
        total = _dequantized_kv_bytes(inputs, n_ctx, counts, dev)
        total += _graph_bytes(inputs, n_ctx, swa, outputs)
    if drafting and holds_output:
        total += _graph_bytes(inputs, n_ctx, False, inputs.n_parallel)
    return total


def _rs_copies(inputs: LlamaCppInputs) -> int:
    """Recurrent states kept per sequence: one, plus one per draft token while drafting
    (llama.cpp's n_rs_seq: a rejected draft rolls the state back)."""
    return 1 + (inputs.spec_n if inputs.mtp_draft else 0)


def _llamacpp_gpu_budget(
    inputs: LlamaCppInputs,
    dev: int,
    counts: _LayerCounts,
    n_ctx: int,
    draft_kv: int,
    on_gpus: int,
) -> LlamaCppGpuBudget:
    shape = inputs.shape
    gpu = inputs.gpus[dev]
    # The output layer (and the MTP nextn layers after it) follow the last repeating
    # layer onto the last GPU, but only once every layer is offloaded.
    last = dev == len(inputs.gpus) - 1 and inputs.n_gpu_layers > shape.num_layers
    per_token = llamacpp_kv_bytes_per_token(shape, inputs.cache_type_k, inputs.cache_type_v)
    body = on_gpus - inputs.output_bytes
    weights = body * counts.all[dev] // shape.num_layers + (inputs.output_bytes if last else 0)
    kv = counts.kv[dev] * per_token * n_ctx + (draft_kv if last else 0)
    swa_tok = llamacpp_swa_bytes_per_token(shape, inputs.cache_type_k, inputs.cache_type_v)
    kv += counts.swa[dev] * swa_tok * llamacpp_swa_cells(inputs, n_ctx)
    rs = counts.linear[dev] * llamacpp_recurrent_state_bytes(shape) * inputs.n_parallel
    rs *= _rs_copies(inputs)
    mmproj = 0
    if dev == 0 and inputs.mmproj_bytes and inputs.mmproj_on_gpu:
        mmproj = inputs.mmproj_bytes + LLAMACPP_MMPROJ_COMPUTE_BYTES
    compute = _llamacpp_compute_bytes(inputs, n_ctx, counts, dev, last)
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
    # The draft-mtp context keeps its own cache of the nextn layers, in llama.cpp's default
    # f16 whatever the target's cache types.
    draft_per_token = llamacpp_kv_bytes_per_token(shape, "f16", "f16")
    draft_kv = shape.mtp_layers * draft_per_token * n_ctx if inputs.mtp_draft else 0
    placed = place_weights(shape, inputs.weights_bytes, inputs.mtp_draft)
    on_gpus = placed.gpu - inputs.cpu_resident_bytes
    budgets = tuple(
        _llamacpp_gpu_budget(inputs, dev, counts, n_ctx, draft_kv, on_gpus)
        for dev in range(len(inputs.gpus))
    )
    dev = min(range(len(budgets)), key=lambda i: budgets[i].free)
    tightest = budgets[dev]
    # One more cell of context costs this GPU's KV rows plus a row of the f16 mask (and, for
    # a quantized cache on CUDA, of its f16 conversion).
    marginal = counts.kv[dev] * per_token
    marginal += (shape.mtp_layers * draft_per_token) if inputs.mtp_draft else 0
    marginal += inputs.n_ubatch * F16_BYTES if inputs.flash_attn else 0
    headroom_tokens = tightest.free // marginal if marginal and tightest.free > 0 else 0
    state = llamacpp_recurrent_state_bytes(shape) if shape.num_state_layers else 0
    kv_per_gpu = tuple(b.kv_cache for b in budgets)
    return LlamaCppFit(
        kv_cache_bytes=sum(kv_per_gpu),
        kv_cache_bytes_per_gpu=kv_per_gpu,
        kv_bytes_per_token=per_token * shape.num_kv_layers,
        drafter_kv_bytes=draft_kv,
        recurrent_state_bytes=state
        * shape.num_state_layers
        * inputs.n_parallel
        * _rs_copies(inputs),
        budgets=budgets,
        fits=all(b.free >= 0 for b in budgets),
        headroom_bytes=tightest.free,
        headroom_tokens=int(headroom_tokens),
        host_weights_bytes=placed.host + inputs.cpu_resident_bytes,
    )
