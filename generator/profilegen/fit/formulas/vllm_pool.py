"""vLLM's KV pool geometry: layer buckets, hybrid block size, groups, blocks per request.

Mirrors (vLLM v0.25.1 to v0.27.1, unchanged in these paths):
platforms/interface.py `_align_hybrid_block_size` (attention block size vs recurrent page),
v1/core/kv_cache_utils.py `_get_kv_cache_groups_uniform_page_size` (group size, padding),
`unify_kv_cache_spec_page_size`, `get_max_concurrency_for_kv_cache_config` and the token
report `int(num_blocks / blocks_per_request * max_model_len)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .common import VLLM_DEFAULT_BLOCK_SIZE, cdiv
from .layers import attention_bytes_per_token, hybrid_block_size, kv_group_size, mamba_state_bytes
from .shapes import VllmInputs
from .vllm_specs import async_scheduling


@dataclass(frozen=True)
class Bucket:
    """Layers sharing one KV-cache spec (vLLM puts them in the same groups)."""

    kind: str  # 'full' | 'sliding' | 'mamba'
    count: int
    token_bytes: int  # per-token bytes (attention) or state bytes (mamba)
    window: int = 0


@dataclass(frozen=True)
class PoolLayout:
    block_size: int
    page_bytes: int
    group_size: int
    blocks_per_request: int
    full_token_bytes: int  # pool bytes per context token (padded groups included)
    fixed_bytes_per_request: int
    uniform: bool = False  # one group whose page sums every layer's page

    @property
    def block_bytes(self) -> int:
        return self.page_bytes * self.group_size


def _attn_tok(inputs: VllmInputs, heads: int, dim: int) -> int:
    return attention_bytes_per_token(
        heads, dim, inputs.tp, inputs.kv_cache_dtype, inputs.model_dtype
    )


def buckets(inputs: VllmInputs) -> list[Bucket]:
    """The target's full, sliding and recurrent layers, then the drafter's KV layers."""
    shape = inputs.shape
    attn_tok = _attn_tok(inputs, shape.num_kv_heads, shape.head_dim)
    full, sliding = shape.own_kv_layers()
    out: list[Bucket] = []
    if sliding:
        sw_tok = _attn_tok(inputs, shape.window_kv_heads, shape.window_head_dim)
        out.append(Bucket("sliding", sliding, sw_tok, shape.sliding_window))
    if shape.num_state_layers:
        state = mamba_state_bytes(
            shape,
            inputs.tp,
            inputs.spec_tokens,
            inputs.mamba_cache_dtype,
            inputs.mamba_ssm_cache_dtype,
            inputs.model_dtype,
        )
        out.append(Bucket("mamba", shape.num_state_layers, state))
    d = inputs.drafter
    if inputs.drafter_active and d is not None and d.num_kv_layers:
        heads = d.num_kv_heads or shape.num_kv_heads
        dim = d.head_dim or shape.head_dim
        d_tok = _attn_tok(inputs, heads, dim)
        if d.sliding_window is None and d_tok == attn_tok:
            full += d.num_kv_layers  # same spec as the target's layers: same bucket
        elif d.sliding_window is None:
            out.append(Bucket("full", d.num_kv_layers, d_tok))
        else:
            out.append(Bucket("sliding", d.num_kv_layers, d_tok, d.sliding_window))
    return [Bucket("full", full, attn_tok), *out] if full else out


def _bucket_block(b: Bucket, page: int) -> int:
    """Tokens per block of an attention bucket after vLLM unifies every page to `page`.

    unify_kv_cache_spec_page_size scales a smaller page's 16-token block by the ratio of
    the pages, and where the ratio is not whole, by its whole part with the page padded:
    Gemma 4 31B with int8-per-token-head KV (2,064 B per token on a global layer, 4,160 on
    a sliding one at TP 2) logged 466,892 tokens from 10.82 GiB, which is 32-token global
    blocks in 66,560-byte pages exactly (16-token ones would halve the pool).
    """
    return VLLM_DEFAULT_BLOCK_SIZE * max(1, page // (VLLM_DEFAULT_BLOCK_SIZE * b.token_bytes))


def in_flight_tokens(inputs: VllmInputs) -> int:
    """Tokens a sliding window must keep beyond itself: the batches in flight (or the canvas).

    From v0.27 every batch scheduled but not settled: two with async scheduling, vLLM's
    default unless an external draft model turns it off (config/vllm.py).
    """
    batches = 1
    if inputs.engine.window_keeps_in_flight and async_scheduling(inputs):
        batches = 2
    return max(batches * inputs.max_num_batched_tokens, inputs.shape.diffusion_canvas)


def blocks_per_request(b: Bucket, block: int, inputs: VllmInputs) -> int:
    t = inputs.max_model_len
    if b.kind == "mamba":
        k = inputs.spec_tokens
        if inputs.mamba_cache_mode == "all":
            return cdiv(t, block) + k
        # align keeps the previous block's state for the conv look-back; one extra block
        # per speculative token lets a rejected step roll back.
        return (2 if inputs.mamba_cache_mode == "align" else 1) + k
    if b.kind == "sliding":
        live = min(b.window - 1 + in_flight_tokens(inputs), t)
        return cdiv(live, block) + 1
    return cdiv(t, block)


def _uniform_layout(inputs: VllmInputs, bs: list[Bucket]) -> PoolLayout:
    # Uniform type: one group whose page is the sum of every layer's page.
    per_token = sum(b.count * b.token_bytes for b in bs)
    per_req = cdiv(inputs.max_model_len, VLLM_DEFAULT_BLOCK_SIZE)
    return PoolLayout(VLLM_DEFAULT_BLOCK_SIZE, 16 * per_token, 1, per_req, per_token, 0, True)


def pool_layout(inputs: VllmInputs) -> PoolLayout:
    bs = buckets(inputs)
    if not bs:
        raise ValueError("the model has no layer that keeps a KV cache or a recurrent state")
    shape = inputs.shape
    attn_tok = _attn_tok(inputs, shape.num_kv_heads, shape.head_dim)
    mamba = next((b.token_bytes for b in bs if b.kind == "mamba"), 0)
    block = hybrid_block_size(attn_tok, mamba, inputs.mamba_cache_mode)
    page = max(block * attn_tok, *(16 * b.token_bytes for b in bs if b.kind != "mamba"))
    if len(bs) == 1 or all(b.kind == "full" for b in bs):
        return _uniform_layout(inputs, bs)
    group = kv_group_size(
        [(b.count, b.kind == "sliding") for b in bs],
        inputs.prefer_padding_sliding_window_groups,
    )
    per_req = full_bytes = fixed = 0
    for b in bs:
        b_block = block if b.kind == "mamba" else _bucket_block(b, page)
        n_blocks = math.ceil(b.count / group) * blocks_per_request(b, b_block, inputs)
        per_req += n_blocks
        if b.kind == "full":
            full_bytes += math.ceil(b.count / group) * group * page // b_block
        else:
            fixed += n_blocks * group * page
    return PoolLayout(block, page, group, per_req, full_bytes, fixed)


def needed_for_one_request(inputs: VllmInputs, layout: PoolLayout) -> int:
    """vLLM's boot check: per-layer max memory of one max_model_len request, unpadded.

    check_enough_kv_cache_memory sums max_memory_usage_bytes over layers, not groups, so
    group padding can leave the pool slightly below one request even when this passes.
    """
    total = 0
    for b in buckets(inputs):
        if layout.uniform:
            blocks = cdiv(inputs.max_model_len, layout.block_size)
            total += blocks * layout.block_size * b.count * b.token_bytes
            continue
        block = layout.block_size if b.kind == "mamba" else _bucket_block(b, layout.page_bytes)
        total += b.count * blocks_per_request(b, block, inputs) * layout.page_bytes
    return total


def tokens_for_blocks(num_blocks: int, layout: PoolLayout, max_model_len: int) -> int:
    """What vLLM logs as "GPU KV cache size": concurrency x max_model_len, not blocks x size."""
    if layout.uniform:
        return num_blocks * layout.block_size
    return int(num_blocks / layout.blocks_per_request * max_model_len)
