"""Pure VRAM / KV-cache fit math for vLLM, llama.cpp and SGLang (no I/O, stdlib only)."""

# Public API (names are stable; the registry glue builds these inputs):
#   ModelShape, GpuSpec, DrafterSpec, VllmEngineFacts, VllmInputs, LlamaCppInputs,
#   SglangInputs                                                      -- frozen inputs
#   VllmBudget, VllmFit, LlamaCppGpuBudget, LlamaCppFit, SglangFit    -- frozen outputs
#   Constants, DEFAULT_CONSTANTS, CONSTANT_NAMES                       -- calibrated values
#   predict_vllm(inputs) -> VllmFit
#   predict_llamacpp(inputs) -> LlamaCppFit
#   predict_sglang(inputs) -> SglangFit
# Building blocks (all pure, all unit-tested): vllm_dtype_bytes, llamacpp_row_bytes,
# kv_heads_per_gpu, attention_bytes_per_token, mamba_state_bytes, hybrid_block_size,
# kv_group_size, weights_per_gpu, mtp_head_params, activation_peak_bytes, ffn_width,
# routed_expert_share, gdn_prefill_scratch_bytes, capture_sizes, persistent_buffers,
# pool_layout, llamacpp_kv_bytes_per_token, llamacpp_layer_devices.
#
# Everything is per GPU unless a name says otherwise. Byte counts are ints.

from __future__ import annotations

from ...units import GIB, MIB
from .calibrated import CONSTANT_NAMES, DEFAULT_CONSTANTS, Constants
from .common import (
    ACT_HIDDEN_COPIES,
    ACT_INTERMEDIATE_COPIES,
    ACTIVATION_DTYPE_BYTES,
    CUDA_CONTEXT_BYTES,
    DRIVER_RESERVED_BYTES,
    GDN_CHUNK_SIZE,
    LLAMACPP_CTX_PADDING,
    LLAMACPP_MMPROJ_COMPUTE_BYTES,
    LLAMACPP_STATE_DTYPE_BYTES,
    VLLM_DEFAULT_BLOCK_SIZE,
    VLLM_GROUP_SIZE_MAX_RATIO,
    VLLM_KERNEL_BLOCK_ALIGNMENT,
    VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES,
    WEIGHT_VRAM_FACTORS,
    cdiv,
    llamacpp_row_bytes,
    vllm_dtype_bytes,
)
from .layers import (
    activation_peak_bytes,
    attention_bytes_per_token,
    ffn_width,
    gdn_prefill_scratch_bytes,
    hybrid_block_size,
    kv_group_size,
    kv_heads_per_gpu,
    mamba_state_bytes,
    mtp_head_params,
    routed_expert_share,
    weights_per_gpu,
)
from .llamacpp import (
    host_attention,
    llamacpp_kv_bytes_per_token,
    llamacpp_layer_devices,
    llamacpp_recurrent_state_bytes,
    llamacpp_swa_cells,
    predict_llamacpp,
)
from .llamacpp_weights import WeightPlacement, model_params, place_weights
from .sglang import predict_sglang, sglang_cell_bytes, sglang_mamba_pool_bytes
from .shapes import (
    DrafterSpec,
    GpuSpec,
    LlamaCppFit,
    LlamaCppGpuBudget,
    LlamaCppInputs,
    ModelShape,
    SglangFit,
    SglangInputs,
    VllmBudget,
    VllmEngineFacts,
    VllmFit,
    VllmInputs,
)
from .vision import (
    TOWERS,
    Tower,
    VisionProfile,
    encoder_peak_bytes,
    replicated_bytes,
    units_per_call,
)
from .vllm import (
    PoolSizer,
    allocator_slack,
    capture_sizes,
    encoder_batch,
    free_at_encoder,
    persistent_buffers,
    predict_vllm,
)
from .vllm_pool import PoolLayout, pool_layout, tokens_for_blocks
from .vllm_specs import pool_query

__all__ = [
    "TOWERS",
    "encoder_batch",
    "encoder_peak_bytes",
    "free_at_encoder",
    "replicated_bytes",
    "units_per_call",
    "Tower",
    "VisionProfile",
    "PoolSizer",
    "pool_query",
    "WeightPlacement",
    "model_params",
    "place_weights",
    "host_attention",
    "ACTIVATION_DTYPE_BYTES",
    "ACT_HIDDEN_COPIES",
    "ACT_INTERMEDIATE_COPIES",
    "CONSTANT_NAMES",
    "CUDA_CONTEXT_BYTES",
    "DEFAULT_CONSTANTS",
    "DRIVER_RESERVED_BYTES",
    "Constants",
    "DrafterSpec",
    "GDN_CHUNK_SIZE",
    "GIB",
    "GpuSpec",
    "LLAMACPP_CTX_PADDING",
    "LLAMACPP_MMPROJ_COMPUTE_BYTES",
    "LLAMACPP_STATE_DTYPE_BYTES",
    "LlamaCppFit",
    "LlamaCppGpuBudget",
    "LlamaCppInputs",
    "MIB",
    "ModelShape",
    "PoolLayout",
    "SglangFit",
    "SglangInputs",
    "VLLM_DEFAULT_BLOCK_SIZE",
    "VLLM_GROUP_SIZE_MAX_RATIO",
    "VLLM_KERNEL_BLOCK_ALIGNMENT",
    "VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES",
    "VllmBudget",
    "VllmEngineFacts",
    "VllmFit",
    "VllmInputs",
    "WEIGHT_VRAM_FACTORS",
    "activation_peak_bytes",
    "allocator_slack",
    "attention_bytes_per_token",
    "capture_sizes",
    "cdiv",
    "ffn_width",
    "gdn_prefill_scratch_bytes",
    "hybrid_block_size",
    "kv_group_size",
    "kv_heads_per_gpu",
    "llamacpp_kv_bytes_per_token",
    "llamacpp_layer_devices",
    "llamacpp_recurrent_state_bytes",
    "llamacpp_row_bytes",
    "llamacpp_swa_cells",
    "mamba_state_bytes",
    "mtp_head_params",
    "persistent_buffers",
    "pool_layout",
    "predict_llamacpp",
    "predict_sglang",
    "predict_vllm",
    "routed_expert_share",
    "sglang_cell_bytes",
    "sglang_mamba_pool_bytes",
    "tokens_for_blocks",
    "vllm_dtype_bytes",
    "weights_per_gpu",
]
