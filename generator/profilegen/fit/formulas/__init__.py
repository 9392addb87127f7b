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

from .common import (
    ACT_HIDDEN_COPIES,
    ACT_INTERMEDIATE_COPIES,
    ACTIVATION_DTYPE_BYTES,
    CUDA_CONTEXT_BYTES,
    CUDAGRAPH_BUFFERS_PER_LAYER,
    DRIVER_RESERVED_BYTES,
    GDN_CHUNK_SIZE,
    GIB,
    LLAMACPP_CTX_PADDING,
    LLAMACPP_MMPROJ_COMPUTE_BYTES,
    LLAMACPP_RUNTIME_OVERHEAD_BYTES,
    LLAMACPP_STATE_DTYPE_BYTES,
    MIB,
    VLLM_DEFAULT_BLOCK_SIZE,
    VLLM_GROUP_SIZE_MAX_RATIO,
    VLLM_KERNEL_BLOCK_ALIGNMENT,
    VLLM_RUNTIME_OVERHEAD_BYTES,
    VLLM_TP_COMM_OVERHEAD_BYTES,
    VLLM_V1_CUDAGRAPH_BASE_BYTES,
    VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES,
    WEIGHT_VRAM_FACTORS,
    cdiv,
    llamacpp_row_bytes,
    vllm_dtype_bytes,
)
from .layers import (
    activation_peak_bytes,
    attention_bytes_per_token,
    gdn_prefill_scratch_bytes,
    hybrid_block_size,
    kv_group_size,
    kv_heads_per_gpu,
    mamba_state_bytes,
    mtp_head_params,
    weights_per_gpu,
)
from .llamacpp import (
    llamacpp_kv_bytes_per_token,
    llamacpp_layer_devices,
    llamacpp_recurrent_state_bytes,
    predict_llamacpp,
)
from .shapes import (
    DrafterSpec,
    GpuSpec,
    LlamaCppFit,
    LlamaCppGpuBudget,
    LlamaCppInputs,
    ModelShape,
    VllmBudget,
    VllmFit,
    VllmInputs,
)
from .vllm import predict_vllm

__all__ = [
    "ACTIVATION_DTYPE_BYTES",
    "ACT_HIDDEN_COPIES",
    "ACT_INTERMEDIATE_COPIES",
    "CUDAGRAPH_BUFFERS_PER_LAYER",
    "CUDA_CONTEXT_BYTES",
    "DRIVER_RESERVED_BYTES",
    "DrafterSpec",
    "GDN_CHUNK_SIZE",
    "GIB",
    "GpuSpec",
    "LLAMACPP_CTX_PADDING",
    "LLAMACPP_MMPROJ_COMPUTE_BYTES",
    "LLAMACPP_RUNTIME_OVERHEAD_BYTES",
    "LLAMACPP_STATE_DTYPE_BYTES",
    "LlamaCppFit",
    "LlamaCppGpuBudget",
    "LlamaCppInputs",
    "MIB",
    "ModelShape",
    "VLLM_DEFAULT_BLOCK_SIZE",
    "VLLM_GROUP_SIZE_MAX_RATIO",
    "VLLM_KERNEL_BLOCK_ALIGNMENT",
    "VLLM_RUNTIME_OVERHEAD_BYTES",
    "VLLM_TP_COMM_OVERHEAD_BYTES",
    "VLLM_V1_CUDAGRAPH_BASE_BYTES",
    "VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES",
    "VllmBudget",
    "VllmFit",
    "VllmInputs",
    "WEIGHT_VRAM_FACTORS",
    "activation_peak_bytes",
    "attention_bytes_per_token",
    "cdiv",
    "gdn_prefill_scratch_bytes",
    "hybrid_block_size",
    "kv_group_size",
    "kv_heads_per_gpu",
    "llamacpp_kv_bytes_per_token",
    "llamacpp_layer_devices",
    "llamacpp_recurrent_state_bytes",
    "llamacpp_row_bytes",
    "mamba_state_bytes",
    "mtp_head_params",
    "predict_llamacpp",
    "predict_vllm",
    "vllm_dtype_bytes",
    "weights_per_gpu",
]
