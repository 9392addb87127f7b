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
    """One recurrent layer's state per sequence on one GPU (GDN or Mamba-2).

    Gated-DeltaNet (vLLM gated_delta_net_state_shape): conv state (conv_dim/tp,
    kernel-1+num_spec) -- the extra columns keep the conv window of every speculative
    token -- plus the SSM state (v_heads/tp, k_dim, v_dim).
    Mamba-2 (mamba2_state_shape): conv ((heads*head_dim + 2*groups*state)/tp, kernel-1+
    num_spec) plus SSM (heads/tp, head_dim, state). Fixed per sequence.
    """
    ssm_key = shape.ssm_state_dtype if ssm_dtype == "auto" else ssm_dtype
    if shape.mamba2_layers and not shape.linear_num_value_heads:
        groups = shape.mamba2_groups + _extra_groups(shape.mamba2_groups, tp)
        conv_dim = shape.mamba2_heads * shape.mamba2_head_dim + 2 * groups * shape.mamba2_state
        conv = conv_dim // tp * (shape.mamba2_conv_kernel - 1 + num_spec)
        ssm = shape.mamba2_heads // tp * shape.mamba2_head_dim * shape.mamba2_state
        return conv * vllm_dtype_bytes(conv_dtype, model_dtype) + ssm * vllm_dtype_bytes(ssm_key)
    conv_dim = (
        2 * shape.linear_num_key_heads * shape.linear_key_head_dim
        + shape.linear_num_value_heads * shape.linear_value_head_dim
    )
    conv = conv_dim // tp * (shape.linear_conv_kernel - 1 + num_spec)
    ssm = (shape.linear_num_value_heads // tp) * shape.linear_key_head_dim
    ssm *= shape.linear_value_head_dim
    return conv * vllm_dtype_bytes(conv_dtype, model_dtype) + ssm * vllm_dtype_bytes(ssm_key)


def _extra_groups(n_groups: int, tp: int) -> int:
    """vLLM's extra_groups_for_head_shards: groups replicated so every rank has whole ones."""
    return 0 if n_groups % tp == 0 else tp - n_groups


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
    return shape.mtp_layers * (attn + _ffn_params(shape)) + 2 * h * h


def _ffn_params(shape: ModelShape) -> int:
    """One layer's feed-forward parameters: gate/up/down of the MLP, or of every expert."""
    h = shape.hidden_size
    if shape.moe_experts and shape.moe_intermediate_size:
        return (
            3
            * h
            * (shape.moe_experts * shape.moe_intermediate_size + shape.moe_shared_intermediate_size)
        )
    return 3 * h * shape.intermediate_size


def routed_expert_share(shape: ModelShape) -> float:
    """Share of the decoder's parameters that are routed experts (what --cpu-moe moves).

    Attention, recurrent and shared-expert weights stay; embeddings and the output layer are
    left out of both sides (llama.cpp keeps token_embd on the host anyway).
    """
    if not (shape.moe_experts and shape.moe_intermediate_size):
        return 0.0
    h = shape.hidden_size
    moe_layers = shape.moe_layers or shape.num_layers
    experts = moe_layers * 3 * h * shape.moe_experts * shape.moe_intermediate_size
    shared = moe_layers * 3 * h * shape.moe_shared_intermediate_size
    attn_layers = shape.num_kv_layers + shape.sliding_layers
    q_out = shape.num_attention_heads * shape.head_dim * (2 if shape.attn_output_gate else 1)
    attn = attn_layers * h * (q_out + 2 * shape.num_kv_heads * shape.head_dim)
    attn += attn_layers * shape.num_attention_heads * shape.head_dim * h
    state = shape.num_state_layers * 4 * h * h  # in/out projections of the recurrent mixer
    dense = (shape.num_layers - moe_layers) * 3 * h * shape.intermediate_size
    return experts / (experts + shared + attn + state + dense)


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


def ffn_width(shape: ModelShape) -> int:
    """Width of the feed-forward activations of one token: the dense MLP, or the routed
    experts' (each of experts_per_token) plus the shared expert's for an MoE layer."""
    if shape.moe_experts and shape.moe_intermediate_size:
        routed = shape.moe_experts_per_token * shape.moe_intermediate_size
        return max(routed + shape.moe_shared_intermediate_size, shape.intermediate_size)
    return shape.intermediate_size


def _ffn_activation_per_token(shape: ModelShape, tp: int) -> int:
    """Feed-forward activations of one token on one GPU, in elements.

    Dense MLP: gate, up and the activated product (3 x intermediate / tp). An MoE layer runs
    fused_moe, whose caches hold every routed copy of the token: (top_k, 2 x I / tp),
    (top_k, I / tp) and (top_k, hidden); the shared expert is a dense MLP beside them.
    """
    if shape.moe_experts and shape.moe_intermediate_size:
        routed = shape.moe_experts_per_token * (
            ACT_INTERMEDIATE_COPIES * cdiv(shape.moe_intermediate_size, tp) + shape.hidden_size
        )
        return routed + ACT_INTERMEDIATE_COPIES * cdiv(shape.moe_shared_intermediate_size, tp)
    return ACT_INTERMEDIATE_COPIES * cdiv(shape.intermediate_size, tp)


def activation_peak_bytes(shape: ModelShape, tp: int, batched_tokens: int) -> int:
    """Peak activation memory of one profiling forward over batched_tokens tokens."""
    per_token = ACT_HIDDEN_COPIES * shape.hidden_size + _ffn_activation_per_token(shape, tp)
    dense = batched_tokens * per_token * ACTIVATION_DTYPE_BYTES
    return dense + gdn_prefill_scratch_bytes(shape, tp, batched_tokens)
