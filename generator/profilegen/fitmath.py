"""Pure VRAM / KV-cache fit math for vLLM v0.27 and llama.cpp (no I/O, stdlib only)."""

# Public API (names are stable; the registry glue builds these inputs):
#   ModelShape, GpuSpec, DrafterSpec, VllmInputs, LlamaCppInputs      -- frozen inputs
#   VllmBudget, VllmFit, LlamaCppGpuBudget, LlamaCppFit                -- frozen outputs
#   predict_vllm(inputs) -> VllmFit
#   predict_llamacpp(inputs) -> LlamaCppFit
# Building blocks (all pure, all unit-tested): vllm_dtype_bytes, llamacpp_row_bytes,
# kv_heads_per_gpu, attention_bytes_per_token, mamba_state_bytes, hybrid_block_size,
# kv_group_size, weights_per_gpu, mtp_head_params, activation_peak_bytes,
# gdn_prefill_scratch_bytes, llamacpp_kv_bytes_per_token, llamacpp_layer_devices.
#
# Everything is per GPU unless a name says otherwise. Byte counts are ints.

from __future__ import annotations

import math
from dataclasses import dataclass, field

GIB = 1 << 30
MIB = 1 << 20

# --- Calibration and mechanism constants -------------------------------------------------
# Each number below is a property of an engine mechanism, never of a model or a profile.
# The calibration points are the boots in shared/MEASUREMENTS.md plus the dual-nvfp4 boot
# recorded in club-3090's compose header (518,430 tokens, stock vLLM).

# cudaMemGetInfo (what vLLM multiplies by gpu_memory_utilization) reports less than NVML:
# the driver keeps ~318 MiB of a 24 GiB Ampere card (torch prints "23.69 GiB total
# capacity" on a 3090 whose NVML total is 24,576 MiB).
DRIVER_RESERVED_BYTES = 318 * MIB

# The CUDA context + torch/cuBLAS handles exist before vLLM's baseline memory snapshot, so
# vLLM never charges them to the util budget; they only matter for the physical check.
CUDA_CONTEXT_BYTES = 320 * MIB

# vLLM's attention block size when no hybrid page unification raises it (FlashAttention and
# FlashInfer both report a minimum kernel block of 16 and vLLM's default block_size is 16).
VLLM_DEFAULT_BLOCK_SIZE = 16
VLLM_KERNEL_BLOCK_ALIGNMENT = 16

# FLA's chunk size for Gated-DeltaNet prefill (fla/ops/utils.py FLA_CHUNK_SIZE); it sizes
# the chunked-prefill scratch and the block alignment of mamba_cache_mode="all".
GDN_CHUNK_SIZE = 64

# vLLM groups hybrid layers with group_size = min bucket, unless max < 1.5 * min
# (kv_cache_utils._get_kv_cache_groups_uniform_page_size in v0.27.1).
VLLM_GROUP_SIZE_MAX_RATIO = 1.5

# Activation peak of the profiling forward over max_num_batched_tokens: the residual
# stream and the normed copy are full width on every rank (2 x hidden), while the MLP's
# gate, up and activated outputs are TP-sharded (3 x intermediate / tp); all bf16. At
# hidden 5120 / intermediate 17408 / TP 2 that is 71 KiB per batched token (0.56 GiB at
# 8192 tokens, 0.74 GiB with the GDN scratch), the same order as the ~1.1 GiB peak a
# warm-cache single-3090 Qwen3.8 boot logs (syv-ai qwen38-27b-rtx3090, gotcha 2).
ACT_HIDDEN_COPIES = 2
ACT_INTERMEDIATE_COPIES = 3
ACTIVATION_DTYPE_BYTES = 2

# Non-torch memory that vLLM's profiling charges to the budget besides weights and the
# activation peak: NCCL communicators, cuBLAS/FlashInfer workspaces, the multimodal
# encoder-cache profile and sampler buffers. Calibrated: the residual of the three
# non-FP8 boots (dual-fast MTP on/off, dual-nvfp4) after every modelled term; the three
# residuals (with the TP term below) lie within 90 MiB of this value.
VLLM_RUNTIME_OVERHEAD_BYTES = 443 * MIB

# Extra per rank when TP > 1: NCCL channel buffers for the all-reduces (PCIe/SHM path).
VLLM_TP_COMM_OVERHEAD_BYTES = 128 * MIB

# The V1 model runner profiles its CUDA graphs and subtracts the estimate before sizing KV.
# Piecewise graphs keep one static activation per layer boundary per captured token; the
# fixed part (graph pool + FULL decode graphs for small batch sizes) is ~0.55 GiB, the
# figure vLLM logs ("Graph capturing finished ... took 0.55 GiB") for a 14B-class model.
VLLM_V1_CUDAGRAPH_BASE_BYTES = 563 * MIB
CUDAGRAPH_BUFFERS_PER_LAYER = 2

# The V2 model runner (forced by DFlash2 drafters) returns 0 from profile_cudagraph_memory,
# so its graphs land ON TOP of the util budget unless VLLM_V2_CUDAGRAPH_MEM_MIB reserves
# them (club-3090's hybrid-kv-groups-v2-cudagraph patch: "~1.2 GiB of graphs").
VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES = int(1.2 * GIB)

# Weights in VRAM over bytes on disk, by how the weights are served. Block-scaled FP8
# served weight-only through Marlin (GPUs without FP8 tensor cores, sm < 8.9) repacks
# every layer and expands the 128x128 block scales to per-column group scales (+1.6%);
# the official Qwen3.8 FP8 boot on 2x3090 needs 4.8% over disk in total (measured, the
# rest of the mechanism is unconfirmed). Other formats load at their on-disk size.
WEIGHT_VRAM_FACTORS: dict[str, float] = {
    "bf16": 1.0,
    "fp16": 1.0,
    "int4": 1.0,
    "int8": 1.0,
    "nvfp4": 1.0,
    "fp8": 1.0,
    "fp8_marlin": 1.046,
}

# llama.cpp: the KV buffer is padded to 256 cells when flash attention is on (llama.cpp
# pads n_ctx to the KV cache padding), and recurrent (r/s) states are kept in f32.
LLAMACPP_CTX_PADDING = 256
LLAMACPP_STATE_DTYPE_BYTES = 4
# mmproj compute buffer on top of its weights: club-3090 measured the F16 Qwen3.8
# projector (928 MB) holding ~1,180 MiB on the GPU, i.e. ~295 MiB beyond the weights.
LLAMACPP_MMPROJ_COMPUTE_BYTES = 295 * MIB
# CUDA context, cuBLAS workspace, llama.cpp's CUDA-graph and host-staging buffers, as
# nvidia-smi counts them. Calibrated: the residual of the single-3090 UD-IQ4_XS
# q4_0@262144 + mmproj + draft-mtp boot (22,290 MiB) after every modelled buffer.
LLAMACPP_RUNTIME_OVERHEAD_BYTES = 654 * MIB

# --- dtype tables -------------------------------------------------------------------------

_VLLM_DTYPE_BYTES: dict[str, int] = {
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "float32": 4,
    "fp32": 4,
    "float": 4,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "int8_per_token_head": 1,
}

# llama.cpp cache types: (bytes per block, values per block), from ggml's type traits.
_LLAMACPP_BLOCKS: dict[str, tuple[int, int]] = {
    "f32": (4, 1),
    "f16": (2, 1),
    "bf16": (2, 1),
    "q8_0": (34, 32),
    "q4_0": (18, 32),
    "q4_1": (20, 32),
    "q5_0": (22, 32),
    "q5_1": (24, 32),
    "iq4_nl": (18, 32),
}


def vllm_dtype_bytes(dtype: str, model_dtype: str = "bfloat16") -> int:
    """Bytes per element of a vLLM cache/weight dtype; 'auto' means the model dtype."""
    key = model_dtype if dtype == "auto" else dtype
    try:
        return _VLLM_DTYPE_BYTES[key.lower()]
    except KeyError:
        raise ValueError(f"unknown vLLM dtype {dtype!r}") from None


def llamacpp_row_bytes(cache_type: str, n_values: int) -> int:
    """ggml_row_size: bytes of a row of n_values in a llama.cpp cache type."""
    try:
        block_bytes, block_values = _LLAMACPP_BLOCKS[cache_type.lower()]
    except KeyError:
        raise ValueError(f"unknown llama.cpp cache type {cache_type!r}") from None
    if n_values % block_values:
        raise ValueError(f"{n_values} values do not fill whole {cache_type} blocks")
    return n_values // block_values * block_bytes


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelShape:
    """Architecture facts from config.json (text_config for multimodal models)."""

    num_layers: int
    num_kv_layers: int  # full-attention layers that grow a per-token KV cache
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    hidden_size: int
    intermediate_size: int
    vocab_size: int
    full_attention_interval: int | None = None  # layer i is full attention iff (i+1) % n == 0
    linear_num_key_heads: int = 0
    linear_num_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = 0
    mtp_layers: int = 0
    attn_output_gate: bool = False  # Qwen3-Next gated attention doubles q_proj
    # Qwen3.5-family configs carry mamba_ssm_dtype float32 and vLLM copies it into
    # --mamba-ssm-cache-dtype when that is 'auto'.
    ssm_state_dtype: str = "float32"

    @property
    def num_linear_layers(self) -> int:
        return self.num_layers - self.num_kv_layers if self.linear_num_value_heads else 0

    def kv_layer_indices(self) -> tuple[int, ...]:
        """Indices of the KV-bearing layers (every n-th for hybrids, else evenly spread)."""
        if self.full_attention_interval:
            n = self.full_attention_interval
            return tuple(i for i in range(self.num_layers) if (i + 1) % n == 0)
        # Without a layer pattern, spread them evenly; a dense model gets every layer.
        n, total = self.num_kv_layers, self.num_layers
        return tuple((k + 1) * total // n - 1 for k in range(n)) if n else ()


@dataclass(frozen=True)
class GpuSpec:
    """One GPU as the rig presents it."""

    vram_bytes: int  # NVML total (a 24 GiB RTX 3090: 25,769,803,776)
    desktop_reservation_bytes: int = 0  # held by a display server / other processes
    cuda_total_bytes: int | None = None  # cudaMemGetInfo total; default NVML - driver

    @property
    def cuda_total(self) -> int:
        if self.cuda_total_bytes is not None:
            return self.cuda_total_bytes
        return self.vram_bytes - DRIVER_RESERVED_BYTES


@dataclass(frozen=True)
class DrafterSpec:
    """A speculative-decoding drafter as vLLM loads it.

    kind 'mtp': the target's built-in MTP head (one attention layer with the target's
    attention shape; its weights are inside the target artifact when embedded_in_target).
    kind 'dflash': a DFlash/DFlash2 block-diffusion drafter with its own draft layers
    (z-lab/Qwen3.8-27B-DFlash2: 5 sliding-window layers, 8 KV heads x 128, window 2048,
    reading 5 target hidden-state taps); forces vLLM's V2 model runner.
    """

    kind: str  # 'mtp' | 'dflash' | 'eagle' | 'draft_model'
    weights_bytes: int
    embedded_in_target: bool = False
    num_kv_layers: int = 1
    num_kv_heads: int | None = None  # None: the target's
    head_dim: int | None = None  # None: the target's
    sliding_window: int | None = None  # None: full attention
    hidden_taps: int = 1  # target hidden states buffered for the drafter
    weight_vram_factor: float = 1.0


@dataclass(frozen=True)
class VllmInputs:
    """Everything vLLM's start-up memory sizing depends on (per profile)."""

    shape: ModelShape
    gpu: GpuSpec
    tp: int
    gpu_memory_utilization: float
    weights_bytes: int  # total artifact bytes (safetensors) of the target
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int = 8192
    kv_cache_dtype: str = "auto"
    model_dtype: str = "bfloat16"
    drafter: DrafterSpec | None = None
    num_speculative_tokens: int = 0  # 0 = drafter off even if one is declared
    kv_cache_memory_bytes: int | None = None  # --kv-cache-memory: replaces the util budget
    cudagraph_capture_size: int | None = None  # max_cudagraph_capture_size; None = default
    cudagraph_reserve_bytes: int | None = None  # VLLM_V2_CUDAGRAPH_MEM_MIB * MiB
    enforce_eager: bool = False
    v2_model_runner: bool | None = None  # None: True iff the drafter is DFlash
    mamba_cache_mode: str = "align"  # 'align' with prefix caching, 'none' without, 'all'
    mamba_ssm_cache_dtype: str = "auto"
    mamba_cache_dtype: str = "auto"  # conv state dtype
    weight_format: str = "bf16"  # key of WEIGHT_VRAM_FACTORS
    replicated_weights_bytes: int = 0  # part of weights_bytes every rank holds whole
    # True when the club-3090 hybrid-kv-groups patch is applied: a sliding-window bucket
    # that is the smallest no longer sets the group size (16/48/5 -> 8 instead of 5).
    prefer_padding_sliding_window_groups: bool = False

    @property
    def spec_tokens(self) -> int:
        return self.num_speculative_tokens if self.drafter is not None else 0

    @property
    def drafter_active(self) -> bool:
        return self.drafter is not None and self.num_speculative_tokens > 0


@dataclass(frozen=True)
class LlamaCppInputs:
    """A llama-server launch: model, context, cache types and GPU placement."""

    shape: ModelShape
    gpus: tuple[GpuSpec, ...]
    n_ctx: int
    weights_bytes: int  # the GGUF file
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    n_parallel: int = 1
    n_ubatch: int = 512
    flash_attn: bool = True
    mmproj_bytes: int = 0
    mmproj_on_gpu: bool = True
    mtp_draft: bool = False  # --spec-type draft-mtp with the GGUF's nextn layers
    n_gpu_layers: int = 999
    tensor_split: tuple[float, ...] | None = None  # default: even (identical cards)
    cpu_resident_bytes: int = 0  # e.g. token_embd, which llama.cpp keeps on the host
    output_bytes: int = 0  # output.weight (lm_head), placed on the last GPU


# --- outputs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class VllmBudget:
    """Per-GPU byte budget, in the order vLLM spends it."""

    total: int  # cudaMemGetInfo total
    claimed_by_util: int  # util x total, or the component sum when KV is pinned
    weights: int
    drafter: int  # drafter weights + its hidden-state buffers
    activations: int
    cuda_graphs: int  # subtracted from the budget (V1 estimate or explicit reserve)
    runtime_overhead: int
    kv_pool: int
    desktop_reservation: int
    unaccounted: int  # outside vLLM's view: CUDA context + unreserved V2 graphs
    free: int  # physical slack; negative means the boot or a soak will OOM

    def as_dict(self) -> dict[str, int]:
        return {name: int(getattr(self, name)) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class VllmFit:
    kv_pool_tokens: int  # what vLLM logs as "GPU KV cache size: N tokens"
    kv_pool_bytes_per_gpu: int
    kv_bytes_per_token_per_gpu: int  # marginal pool bytes per context token
    fixed_state_bytes_per_request: int  # mamba/GDN state + window pages per request
    block_size: int
    group_size: int
    num_blocks: int
    blocks_per_request: int
    max_concurrency: float  # requests of max_model_len the pool holds
    budget: VllmBudget
    boots: bool  # vLLM's own checks: one max_model_len request fits, budget positive
    fits: bool  # max_model_len x max_num_seqs fits and nothing overflows the card
    headroom_tokens: int  # kv_pool_tokens - max_model_len * max_num_seqs


@dataclass(frozen=True)
class LlamaCppGpuBudget:
    total: int  # NVML total of this GPU
    weights: int
    kv_cache: int
    recurrent_state: int
    mmproj: int
    compute_buffer: int
    runtime_overhead: int
    desktop_reservation: int
    free: int

    def as_dict(self) -> dict[str, int]:
        return {name: int(getattr(self, name)) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class LlamaCppFit:
    kv_cache_bytes: int  # the target's KV buffer ("KV buffer size" summed over GPUs)
    kv_cache_bytes_per_gpu: tuple[int, ...]
    kv_bytes_per_token: int
    drafter_kv_bytes: int
    recurrent_state_bytes: int
    budgets: tuple[LlamaCppGpuBudget, ...] = field(default_factory=tuple)
    fits: bool = False
    headroom_bytes: int = 0  # smallest per-GPU free
    headroom_tokens: int = 0  # extra context the tightest GPU could still hold


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
        return chunk * _cdiv(_cdiv(mamba_page_bytes, attn_token_bytes), chunk)
    return max(VLLM_DEFAULT_BLOCK_SIZE, align * _cdiv(mamba_page_bytes, align * attn_token_bytes))


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
    h = _cdiv(batched_tokens, GDN_CHUNK_SIZE) * heads * dv * dk * 2
    return h + 2 * batched_tokens * heads * dv * 2


def activation_peak_bytes(shape: ModelShape, tp: int, batched_tokens: int) -> int:
    """Peak activation memory of one profiling forward over batched_tokens tokens."""
    per_token = ACT_HIDDEN_COPIES * shape.hidden_size
    per_token += ACT_INTERMEDIATE_COPIES * _cdiv(shape.intermediate_size, tp)
    dense = batched_tokens * per_token * ACTIVATION_DTYPE_BYTES
    return dense + gdn_prefill_scratch_bytes(shape, tp, batched_tokens)


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
            return _cdiv(t, block) + k
        # align keeps the previous block's state for the conv look-back; one extra block
        # per speculative token lets a rejected step roll back.
        return (2 if inputs.mamba_cache_mode == "align" else 1) + k
    if b.kind == "sliding":
        live = min(b.window - 1 + inputs.max_num_batched_tokens, t)
        return _cdiv(live, block) + 1
    return _cdiv(t, block)


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
        per_req = _cdiv(inputs.max_model_len, VLLM_DEFAULT_BLOCK_SIZE)
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
            blocks = _cdiv(inputs.max_model_len, layout.block_size)
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


# --- llama.cpp ----------------------------------------------------------------------------


def llamacpp_kv_bytes_per_token(shape: ModelShape, cache_type_k: str, cache_type_v: str) -> int:
    """K+V bytes per token of one KV layer: ggml_row_size over n_embd_k/v_gqa."""
    row = shape.num_kv_heads * shape.head_dim
    return llamacpp_row_bytes(cache_type_k, row) + llamacpp_row_bytes(cache_type_v, row)


def llamacpp_recurrent_state_bytes(shape: ModelShape) -> int:
    """One linear-attention layer's r (conv) + s (SSM) state per sequence, f32."""
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
    act = ub * (
        ACT_HIDDEN_COPIES * shape.hidden_size + ACT_INTERMEDIATE_COPIES * shape.intermediate_size
    )
    act *= 4  # llama.cpp computes activations in f32
    act += gdn_prefill_scratch_bytes(shape, 1, ub) * 2  # f32 scratch
    logits = shape.vocab_size * ub * 4 if holds_output else 0
    return attn + act + logits


@dataclass(frozen=True)
class _LayerCounts:
    all: tuple[int, ...]
    kv: tuple[int, ...]
    linear: tuple[int, ...]


def _llamacpp_layer_counts(inputs: LlamaCppInputs) -> _LayerCounts:
    shape = inputs.shape
    n_dev = len(inputs.gpus)
    devices = llamacpp_layer_devices(
        shape.num_layers, n_dev, inputs.tensor_split, inputs.n_gpu_layers
    )
    kv_set = set(shape.kv_layer_indices())
    all_l, kv_l, lin_l = [0] * n_dev, [0] * n_dev, [0] * n_dev
    for il, dev in enumerate(devices):
        if dev < 0:
            continue  # a CPU layer keeps its weights, KV and state in host memory
        all_l[dev] += 1
        if il in kv_set:
            kv_l[dev] += 1
        elif shape.num_linear_layers:
            lin_l[dev] += 1
    return _LayerCounts(tuple(all_l), tuple(kv_l), tuple(lin_l))


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
    rs = counts.linear[dev] * llamacpp_recurrent_state_bytes(shape) * inputs.n_parallel
    mmproj = 0
    if dev == 0 and inputs.mmproj_bytes and inputs.mmproj_on_gpu:
        mmproj = inputs.mmproj_bytes + LLAMACPP_MMPROJ_COMPUTE_BYTES
    compute = _llamacpp_compute_bytes(inputs, n_ctx, last)
    if inputs.mtp_draft and last:
        # The draft-mtp context reserves its own worst-case graph next to the target's.
        compute += _llamacpp_compute_bytes(inputs, n_ctx, True)
    used = weights + kv + rs + mmproj + compute + LLAMACPP_RUNTIME_OVERHEAD_BYTES
    desktop = gpu.desktop_reservation_bytes
    return LlamaCppGpuBudget(
        total=gpu.vram_bytes,
        weights=weights,
        kv_cache=kv,
        recurrent_state=rs,
        mmproj=mmproj,
        compute_buffer=compute,
        runtime_overhead=LLAMACPP_RUNTIME_OVERHEAD_BYTES,
        desktop_reservation=desktop,
        free=gpu.vram_bytes - used - desktop,
    )


def predict_llamacpp(inputs: LlamaCppInputs) -> LlamaCppFit:
    """Predict llama.cpp's KV buffer and per-GPU budget for a (layer-split) launch."""
    shape = inputs.shape
    if not inputs.gpus or inputs.n_ctx < 1 or inputs.n_parallel < 1:
        raise ValueError("need at least one GPU, a positive n_ctx and n_parallel")
    # The KV buffer holds n_ctx cells in total (split between the n_parallel sequences).
    n_ctx = _cdiv(inputs.n_ctx, LLAMACPP_CTX_PADDING) * LLAMACPP_CTX_PADDING
    per_token = llamacpp_kv_bytes_per_token(shape, inputs.cache_type_k, inputs.cache_type_v)
    counts = _llamacpp_layer_counts(inputs)
    kv_per_gpu = tuple(n * per_token * n_ctx for n in counts.kv)
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
    state = llamacpp_recurrent_state_bytes(shape) if shape.num_linear_layers else 0
    return LlamaCppFit(
        kv_cache_bytes=sum(kv_per_gpu),
        kv_cache_bytes_per_gpu=kv_per_gpu,
        kv_bytes_per_token=per_token * shape.num_kv_layers,
        drafter_kv_bytes=draft_kv,
        recurrent_state_bytes=state * shape.num_linear_layers * inputs.n_parallel,
        budgets=budgets,
        fits=all(b.free >= 0 for b in budgets),
        headroom_bytes=tightest.free,
        headroom_tokens=int(headroom_tokens),
    )
