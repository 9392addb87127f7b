"""Per-layer formulas shared by the vLLM and llama.cpp models."""

from __future__ import annotations

import math

from .common import (
    ACT_HIDDEN_COPIES,
    ACT_INTERMEDIATE_COPIES,
    ACTIVATION_DTYPE_BYTES,
    GDN_CHUNK_SIZE,
    VLLM_DEFAULT_BLOCK_SIZE,
    VLLM_GROUP_SIZE_MAX_RATIO,
    VLLM_KERNEL_BLOCK_ALIGNMENT,
    cdiv,
    vllm_dtype_bytes,
)
from .shapes import ModelShape

# --- shared per-layer formulas ------------------------------------------------------------


def kv_heads_per_gpu(num_kv_heads: int, tp: int) -> int:
    """vLLM shards KV heads over TP and replicates them once TP exceeds their count."""
    return max(1, num_kv_heads // tp)


def attention_bytes_per_token(
    num_kv_heads: int, head_dim: int, tp: int, kv_dtype: str, model_dtype: str = "bfloat16"
) -> int:
    """One layer's K+V bytes per token on one GPU (vLLM FullAttentionSpec, block_size 1)."""
    heads = kv_heads_per_gpu(num_kv_heads, tp)
    width = vllm_dtype_bytes(kv_dtype, model_dtype)
    # int8_per_token_head stores one fp32 scale per head next to each K and V row.
    scale = 4 if kv_dtype == "int8_per_token_head" else 0
    return 2 * heads * (head_dim * width + scale)


def mamba_state_bytes(
    shape: ModelShape,
    tp: int,
    num_spec: int,
    conv_dtype: str,
    ssm_dtype: str,
    model_dtype: str = "bfloat16",
) -> int:
    """One Gated-DeltaNet layer's recurrent state per sequence on one GPU.

    vLLM's gated_delta_net_state_shape: conv state (conv_dim/tp, kernel-1+num_spec) -- the
    extra columns keep the conv window of every speculative token -- plus the SSM state
    (v_heads/tp, k_dim, v_dim). Fixed per sequence, independent of context length.
    """
    conv_dim = (
        2 * shape.linear_num_key_heads * shape.linear_key_head_dim
        + shape.linear_num_value_heads * shape.linear_value_head_dim
    )
    conv = conv_dim // tp * (shape.linear_conv_kernel - 1 + num_spec)
    ssm = (shape.linear_num_value_heads // tp) * shape.linear_key_head_dim
    ssm *= shape.linear_value_head_dim
    ssm_key = shape.ssm_state_dtype if ssm_dtype == "auto" else ssm_dtype
    return conv * vllm_dtype_bytes(conv_dtype, model_dtype) + ssm * vllm_dtype_bytes(ssm_key)


def hybrid_block_size(attn_token_bytes: int, mamba_page_bytes: int, mamba_cache_mode: str) -> int:
    """Attention block size vLLM picks so one attention page holds one mamba state.

    none/align: the smallest multiple of the kernel alignment (16) whose page >= the state;
    all: rounded to lcm(GDN chunk, 16) for the SSD kernels' chunk layout.
    """
    if mamba_page_bytes <= 0:
        return VLLM_DEFAULT_BLOCK_SIZE
    align = VLLM_KERNEL_BLOCK_ALIGNMENT
    if mamba_cache_mode == "all":
        chunk = math.lcm(GDN_CHUNK_SIZE, align)
        return chunk * cdiv(cdiv(mamba_page_bytes, attn_token_bytes), chunk)
    return max(VLLM_DEFAULT_BLOCK_SIZE, align * cdiv(mamba_page_bytes, align * attn_token_bytes))


def kv_group_size(bucket_sizes: list[tuple[int, bool]], prefer_padding_sliding: bool) -> int:
    """vLLM's KV-cache group size for buckets of same-spec layers: (count, is_sliding).

    Every group holds group_size layer slots and one block costs group_size pages, so a
    bucket of n layers costs ceil(n / group_size) groups (the remainder is padding).
    """
    counts = [n for n, _ in bucket_sizes]
    smallest, largest = min(counts), max(counts)
    if largest < smallest * VLLM_GROUP_SIZE_MAX_RATIO:
        return largest
    if not prefer_padding_sliding:
        return smallest
    sliding = [n for n, is_sw in bucket_sizes if is_sw]
    others = [n for n, is_sw in bucket_sizes if not is_sw]
    if not sliding or not others or min(sliding) != smallest:
        return smallest
    # The patch: pad the cheap window groups instead of the per-token ones.
    g_all = 0
    for n in others:
        g_all = math.gcd(g_all, n)
    for g in range(g_all, smallest, -1):
        if g_all % g == 0 and all((g - n % g) % g <= n for n in sliding):
            return g
    return smallest


def weights_per_gpu(total_bytes: int, tp: int, replicated_bytes: int = 0) -> int:
    """Sharded weights split over TP; the replicated part is held whole on every rank.

    vLLM shards embeddings and lm_head over the vocab, and the vision tower, attention and
    GDN projections over heads, so for Qwen3.x nearly nothing is replicated (norms, and
    K/V projections only once TP exceeds the KV heads).
    """
    return (total_bytes - replicated_bytes) // tp + replicated_bytes


def mtp_head_params(shape: ModelShape) -> int:
    """Parameters of a built-in MTP head: its decoder layers plus the 2h->h fusion fc."""
    h = shape.hidden_size
    q_out = shape.num_attention_heads * shape.head_dim * (2 if shape.attn_output_gate else 1)
    kv_out = 2 * shape.num_kv_heads * shape.head_dim
    attn = h * q_out + h * kv_out + shape.num_attention_heads * shape.head_dim * h
    mlp = 3 * h * shape.intermediate_size
    return shape.mtp_layers * (attn + mlp) + 2 * h * h


def gdn_prefill_scratch_bytes(shape: ModelShape, tp: int, batched_tokens: int) -> int:
    """FLA chunk_gated_delta_rule_fwd buffers live during a chunked prefill (bf16).

    h: (tokens/64, v_heads/tp, v_dim, k_dim); v_new and o: (tokens, v_heads/tp, v_dim).
    Derived from the kernel source; club-3090 #838 hit the 96 MiB h allocation exactly.
    """
    if not shape.linear_num_value_heads:
        return 0
    heads = shape.linear_num_value_heads // tp
    dk, dv = shape.linear_key_head_dim, shape.linear_value_head_dim
    h = cdiv(batched_tokens, GDN_CHUNK_SIZE) * heads * dv * dk * 2
    return h + 2 * batched_tokens * heads * dv * 2


def activation_peak_bytes(shape: ModelShape, tp: int, batched_tokens: int) -> int:
    """Peak activation memory of one profiling forward over batched_tokens tokens."""
    per_token = ACT_HIDDEN_COPIES * shape.hidden_size
    per_token += ACT_INTERMEDIATE_COPIES * cdiv(shape.intermediate_size, tp)
    dense = batched_tokens * per_token * ACTIVATION_DTYPE_BYTES
    return dense + gdn_prefill_scratch_bytes(shape, tp, batched_tokens)
