"""vLLM v0.27: the KV pool it reports at start-up and the per-GPU budget."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .common import (
    ACTIVATION_DTYPE_BYTES,
    CUDA_CONTEXT_BYTES,
    CUDAGRAPH_BUFFERS_PER_LAYER,
    VLLM_DEFAULT_BLOCK_SIZE,
    VLLM_RUNTIME_OVERHEAD_BYTES,
    VLLM_TP_COMM_OVERHEAD_BYTES,
    VLLM_V1_CUDAGRAPH_BASE_BYTES,
    VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES,
    WEIGHT_VRAM_FACTORS,
    cdiv,
)
from .layers import (
    activation_peak_bytes,
    attention_bytes_per_token,
    hybrid_block_size,
    kv_group_size,
    mamba_state_bytes,
    weights_per_gpu,
)
from .shapes import VllmBudget, VllmFit, VllmInputs

# --- vLLM KV pool -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Bucket:
    """Layers sharing one KV-cache spec (vLLM puts them in the same groups)."""

    kind: str  # 'full' | 'sliding' | 'mamba'
    count: int
    token_bytes: int  # per-token bytes (attention) or state bytes (mamba)
    window: int = 0


@dataclass(frozen=True)
class _PoolLayout:
    block_size: int
    page_bytes: int
    group_size: int
    blocks_per_request: int
    full_token_bytes: int  # pool bytes per context token (padded groups included)
    fixed_bytes_per_request: int
    uniform: bool = False  # one group whose page sums every layer's page


def _buckets(inputs: VllmInputs, attn_tok: int) -> list[_Bucket]:
    shape, tp = inputs.shape, inputs.tp
    full = shape.num_kv_layers
    buckets: list[_Bucket] = []
    if shape.num_linear_layers:
        state = mamba_state_bytes(
            shape,
            tp,
            inputs.spec_tokens,
            inputs.mamba_cache_dtype,
            inputs.mamba_ssm_cache_dtype,
            inputs.model_dtype,
        )
        buckets.append(_Bucket("mamba", shape.num_linear_layers, state))
    d = inputs.drafter
    if inputs.drafter_active and d is not None:
        heads = d.num_kv_heads or shape.num_kv_heads
        dim = d.head_dim or shape.head_dim
        d_tok = attention_bytes_per_token(heads, dim, tp, inputs.kv_cache_dtype, inputs.model_dtype)
        if d.sliding_window is None and d_tok == attn_tok:
            full += d.num_kv_layers  # same spec as the target's layers: same bucket
        elif d.sliding_window is None:
            buckets.append(_Bucket("full", d.num_kv_layers, d_tok))
        else:
            buckets.append(_Bucket("sliding", d.num_kv_layers, d_tok, d.sliding_window))
    return [_Bucket("full", full, attn_tok), *buckets]


def _bucket_block(b: _Bucket, page: int) -> int:
    """Tokens per block of an attention bucket after vLLM unifies every page to `page`."""
    # unify_kv_cache_spec_page_size scales a smaller page's 16-token block by the integer
    # ratio; when the ratio is not an integer the bucket keeps 16 tokens per (padded) page,
    # which is what makes e.g. int8-per-token-head drafter layers so expensive.
    base = VLLM_DEFAULT_BLOCK_SIZE * b.token_bytes
    return page // b.token_bytes if page % base == 0 else VLLM_DEFAULT_BLOCK_SIZE


def _blocks_per_request(b: _Bucket, block: int, inputs: VllmInputs) -> int:
    t = inputs.max_model_len
    if b.kind == "mamba":
        k = inputs.spec_tokens
        if inputs.mamba_cache_mode == "all":
            return cdiv(t, block) + k
        # align keeps the previous block's state for the conv look-back; one extra block
        # per speculative token lets a rejected step roll back.
        return (2 if inputs.mamba_cache_mode == "align" else 1) + k
    if b.kind == "sliding":
        live = min(b.window - 1 + inputs.max_num_batched_tokens, t)
        return cdiv(live, block) + 1
    return cdiv(t, block)


def _pool_layout(inputs: VllmInputs) -> _PoolLayout:
    attn_tok = attention_bytes_per_token(
        inputs.shape.num_kv_heads,
        inputs.shape.head_dim,
        inputs.tp,
        inputs.kv_cache_dtype,
        inputs.model_dtype,
    )
    buckets = _buckets(inputs, attn_tok)
    mamba = next((b.token_bytes for b in buckets if b.kind == "mamba"), 0)
    block = hybrid_block_size(attn_tok, mamba, inputs.mamba_cache_mode)
    page = max(block * attn_tok, *(16 * b.token_bytes for b in buckets if b.kind != "mamba"))
    if len(buckets) == 1 or all(b.kind == "full" for b in buckets):
        # Uniform type: one group whose page is the sum of every layer's page.
        per_token = sum(b.count * b.token_bytes for b in buckets)
        per_req = cdiv(inputs.max_model_len, VLLM_DEFAULT_BLOCK_SIZE)
        return _PoolLayout(VLLM_DEFAULT_BLOCK_SIZE, 16 * per_token, 1, per_req, per_token, 0, True)
    group = kv_group_size(
        [(b.count, b.kind == "sliding") for b in buckets],
        inputs.prefer_padding_sliding_window_groups,
    )
    per_req = 0
    full_bytes = 0
    fixed = 0
    for b in buckets:
        b_block = block if b.kind == "mamba" else _bucket_block(b, page)
        n_blocks = math.ceil(b.count / group) * _blocks_per_request(b, b_block, inputs)
        per_req += n_blocks
        if b.kind == "full":
            full_bytes += math.ceil(b.count / group) * group * page // b_block
        else:
            fixed += n_blocks * group * page
    return _PoolLayout(block, page, group, per_req, full_bytes, fixed)


def _needed_for_one_request(inputs: VllmInputs) -> int:
    """vLLM's boot check: per-layer max memory of one max_model_len request, unpadded.

    check_enough_kv_cache_memory sums max_memory_usage_bytes over layers, not groups, so
    group padding can leave the pool slightly below one request even when this passes.
    """
    attn_tok = attention_bytes_per_token(
        inputs.shape.num_kv_heads,
        inputs.shape.head_dim,
        inputs.tp,
        inputs.kv_cache_dtype,
        inputs.model_dtype,
    )
    layout = _pool_layout(inputs)
    total = 0
    for b in _buckets(inputs, attn_tok):
        if layout.uniform:
            blocks = cdiv(inputs.max_model_len, layout.block_size)
            total += blocks * layout.block_size * b.count * b.token_bytes
            continue
        block = layout.block_size if b.kind == "mamba" else _bucket_block(b, layout.page_bytes)
        total += b.count * _blocks_per_request(b, block, inputs) * layout.page_bytes
    return total


# --- vLLM budget --------------------------------------------------------------------------


def _v2_runner(inputs: VllmInputs) -> bool:
    if inputs.v2_model_runner is not None:
        return inputs.v2_model_runner
    return inputs.drafter is not None and inputs.drafter.kind == "dflash"


def _capture_size(inputs: VllmInputs) -> int:
    if inputs.cudagraph_capture_size is not None:
        return inputs.cudagraph_capture_size
    # vLLM's default: twice the largest uniform decode batch, capped at 512.
    return min(inputs.max_num_seqs * (1 + inputs.spec_tokens) * 2, 512)


def _cuda_graph_bytes(inputs: VllmInputs) -> tuple[int, int]:
    """(charged to the budget, landing on top of it)."""
    if inputs.enforce_eager:
        return 0, 0
    if inputs.cudagraph_reserve_bytes is not None:
        return inputs.cudagraph_reserve_bytes, 0
    if _v2_runner(inputs):
        return 0, VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES
    shape = inputs.shape
    per_token = shape.num_layers * shape.hidden_size * ACTIVATION_DTYPE_BYTES
    return VLLM_V1_CUDAGRAPH_BASE_BYTES + _capture_size(inputs) * per_token * (
        CUDAGRAPH_BUFFERS_PER_LAYER
    ), 0


def _weight_factor(fmt: str) -> float:
    try:
        return WEIGHT_VRAM_FACTORS[fmt]
    except KeyError:
        raise ValueError(f"unknown weight format {fmt!r}") from None


def _weight_terms(inputs: VllmInputs) -> tuple[int, int]:
    """(target weights, drafter weights + buffers) per GPU."""
    factor = _weight_factor(inputs.weight_format)
    d = inputs.drafter
    target = inputs.weights_bytes
    if d is not None and d.embedded_in_target:
        target -= d.weights_bytes  # the head is counted as drafter, or not loaded at all
    weights = weights_per_gpu(int(target * factor), inputs.tp, inputs.replicated_weights_bytes)
    if not inputs.drafter_active or d is None:
        return weights, 0
    d_factor = factor if d.embedded_in_target else d.weight_vram_factor
    drafter = int(d.weights_bytes * d_factor) // inputs.tp
    # The proposer keeps the target hidden states it drafts from, full width on every rank.
    drafter += (
        inputs.max_num_batched_tokens
        * inputs.shape.hidden_size
        * ACTIVATION_DTYPE_BYTES
        * d.hidden_taps
    )
    return weights, drafter


def predict_vllm(inputs: VllmInputs) -> VllmFit:
    """Predict vLLM v0.27's start-up KV pool and per-GPU budget before booting."""
    if inputs.tp < 1 or inputs.max_model_len < 1 or inputs.max_num_seqs < 1:
        raise ValueError("tp, max_model_len and max_num_seqs must be positive")
    if inputs.mamba_cache_mode not in ("none", "align", "all"):
        raise ValueError(f"unknown mamba_cache_mode {inputs.mamba_cache_mode!r}")
    layout = _pool_layout(inputs)
    total = inputs.gpu.cuda_total
    weights, drafter = _weight_terms(inputs)
    activations = activation_peak_bytes(inputs.shape, inputs.tp, inputs.max_num_batched_tokens)
    graphs, graphs_on_top = _cuda_graph_bytes(inputs)
    runtime = VLLM_RUNTIME_OVERHEAD_BYTES + (VLLM_TP_COMM_OVERHEAD_BYTES if inputs.tp > 1 else 0)
    spent = weights + drafter + activations + graphs + runtime
    if inputs.kv_cache_memory_bytes is not None:
        available = inputs.kv_cache_memory_bytes  # pinned: util no longer sizes the pool
        claimed = spent + available
    else:
        claimed = int(total * inputs.gpu_memory_utilization)
        available = claimed - spent
    block_bytes = layout.page_bytes * layout.group_size
    num_blocks = max(0, available) // block_bytes
    concurrency = num_blocks / layout.blocks_per_request
    tokens = int(concurrency * inputs.max_model_len)
    unaccounted = CUDA_CONTEXT_BYTES + graphs_on_top
    desktop = inputs.gpu.desktop_reservation_bytes
    free = total - claimed - unaccounted - desktop
    budget = VllmBudget(
        total=total,
        claimed_by_util=claimed,
        weights=weights,
        drafter=drafter,
        activations=activations,
        cuda_graphs=graphs,
        runtime_overhead=runtime,
        kv_pool=num_blocks * block_bytes,
        desktop_reservation=desktop,
        unaccounted=unaccounted,
        free=free,
    )
    boots = available > 0 and available >= _needed_for_one_request(inputs)
    wanted = inputs.max_model_len * inputs.max_num_seqs
    return VllmFit(
        kv_pool_tokens=tokens,
        kv_pool_bytes_per_gpu=num_blocks * block_bytes,
        kv_bytes_per_token_per_gpu=layout.full_token_bytes,
        fixed_state_bytes_per_request=layout.fixed_bytes_per_request,
        block_size=layout.block_size,
        group_size=layout.group_size,
        num_blocks=num_blocks,
        blocks_per_request=layout.blocks_per_request,
        max_concurrency=concurrency,
        budget=budget,
        boots=boots,
        fits=boots and concurrency >= inputs.max_num_seqs and free >= 0,
        headroom_tokens=tokens - wanted,
    )
