"""Constants, dtype widths and small helpers shared by the fit formulas."""

from __future__ import annotations

from ...units import GIB, MIB

# --- Mechanism constants ------------------------------------------------------------------
# Each number below is a property of an engine or a driver, never of a model or a profile.
# The constants that measured boots calibrate live in `calibrated.py`.

# cudaMemGetInfo (what vLLM multiplies by gpu_memory_utilization) reports less than NVML:
# the driver keeps ~318 MiB of a 24 GiB Ampere card (torch prints "23.69 GiB total
# capacity" on a 3090 whose NVML total is 24,576 MiB).
DRIVER_RESERVED_BYTES = 318 * MIB

# The CUDA context + torch/cuBLAS handles (and NCCL) exist before vLLM's baseline memory
# snapshot, so vLLM never charges them to the util budget; they only matter physically.
CUDA_CONTEXT_BYTES = 320 * MIB

# vLLM's attention block size when no hybrid page unification raises it (FlashAttention and
# FlashInfer both report a minimum kernel block of 16 and vLLM's default block_size is 16).
VLLM_DEFAULT_BLOCK_SIZE = 16
VLLM_KERNEL_BLOCK_ALIGNMENT = 16

# FLA's chunk size for Gated-DeltaNet prefill (fla/ops/utils.py FLA_CHUNK_SIZE); it sizes
# the chunked-prefill scratch and the block alignment of mamba_cache_mode="all".
GDN_CHUNK_SIZE = 64

# vLLM groups hybrid layers with group_size = min bucket, unless max < 1.5 * min
# (kv_cache_utils._get_kv_cache_groups_uniform_page_size, v0.25.1 to v0.27.1).
VLLM_GROUP_SIZE_MAX_RATIO = 1.5

# vLLM's default largest CUDA-graph capture: twice the largest uniform decode batch,
# capped (config/vllm.py _set_cudagraph_sizes); sizes step by 8 to 256, then by 16.
VLLM_CAPTURE_CAP = 512

# Activation peak of the profiling forward over max_num_batched_tokens: the residual
# stream and the normed copy are full width on every rank (2 x hidden), while the MLP's
# gate, up and activated outputs are TP-sharded (3 x intermediate / tp); all bf16. At
# hidden 5120 / intermediate 17408 / TP 2 that is 71 KiB per batched token (0.56 GiB at
# 8192 tokens, 0.74 GiB with the GDN scratch), the same order as the ~1.1 GiB peak a
# warm-cache single-3090 Qwen3.8 boot logs (syv-ai qwen38-27b-rtx3090, gotcha 2).
ACT_HIDDEN_COPIES = 2
ACT_INTERMEDIATE_COPIES = 3
ACTIVATION_DTYPE_BYTES = 2

# The V2 model runner (forced by DFlash2 drafters) returns 0 from profile_cudagraph_memory
# up to v0.28, so its graphs land ON TOP of the util budget unless a patch reserves them
# (club-3090's hybrid-kv-groups-v2-cudagraph patch: VLLM_V2_CUDAGRAPH_MEM_MIB, "~1.2 GiB").
VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES = int(1.2 * GIB)

# Weights in VRAM over bytes on disk, by the kernel path that serves them. Block-scaled FP8
# served weight-only through Marlin (GPUs without FP8 tensor cores, sm < 8.9) expands the
# 128x128 block scales to per-column group scales: +1.6% of the weights. The other paths
# load at their on-disk size.
WEIGHT_VRAM_FACTORS: dict[str, float] = {
    "native": 1.0,
    "marlin4": 1.0,
    "marlin-fp8": 1.016,
}

# llama.cpp: the KV buffer is padded to 256 cells when flash attention is on (llama.cpp
# pads n_ctx to the KV cache padding), and recurrent (r/s) states are kept in f32.
LLAMACPP_CTX_PADDING = 256
LLAMACPP_STATE_DTYPE_BYTES = 4
# Cache types a default CUDA build's flash attention reads (ggml-cuda/fattn.cu without
# GGML_CUDA_FA_ALL_QUANTS): with another type for K or V the attention runs on the CPU.
LLAMACPP_CUDA_FA_TYPES = frozenset({"f32", "f16", "bf16", "q4_0", "q8_0"})
# The GPU's graph then splits at every attention layer and holds 3.5 feed-forward widths of
# f32 activations per token instead of 2: read off the three boots that run it (Gemma 4 12B
# and 31B, Qwen 3.6 27B with q5_0 K / q4_1 V on an H200: 3.53, 3.64 and 3.57).
LLAMACPP_HOST_ATTENTION_FFN_COPIES = 3.5
# mmproj compute buffer on top of its weights: club-3090 measured the F16 Qwen3.8
# projector (928 MB) holding ~1,180 MiB on the GPU, i.e. ~295 MiB beyond the weights.
LLAMACPP_MMPROJ_COMPUTE_BYTES = 295 * MIB

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
    "int8": 1,
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


def cdiv(a: int, b: int) -> int:
    return -(-a // b)
