"""SGLang (0.5.x): the static memory fraction and the KV pool it leaves.

srt/model_executor/model_runner_kv_cache_mixin.py `_profile_available_bytes`:
  rest = free_after_weights - free_at_start x (1 - mem_fraction_static)
       = free_at_start x mem_fraction_static - weights
then the recurrent (Mamba/GDN) pool of a hybrid model comes off `rest` (max_running_requests
states, plus one per draft token when speculative decoding keeps intermediate states), and
  max_total_num_tokens = rest // cell // page_size x page_size,
  cell = kv_heads_per_rank x (head_dim + v_head_dim) x full-attention layers x dtype bytes.
"Free at start" is read after the distributed init, so the CUDA context and the NCCL /
custom all-reduce buffers are already gone from it. The rest of the card (1 - fraction of
it) is left for activations and CUDA graphs.
"""

from __future__ import annotations

from .common import vllm_dtype_bytes
from .layers import kv_heads_per_gpu, mamba_state_bytes, weights_per_gpu
from .shapes import SglangFit, SglangInputs


def sglang_cell_bytes(inputs: SglangInputs) -> int:
    """KV bytes of one token on one GPU (K and V of every full-attention layer)."""
    shape = inputs.shape
    heads = kv_heads_per_gpu(shape.num_kv_heads, inputs.tp)
    width = vllm_dtype_bytes(inputs.kv_cache_dtype, inputs.model_dtype)
    full, sliding = shape.own_kv_layers()
    return heads * 2 * shape.head_dim * width * (full + sliding)


def sglang_mamba_pool_bytes(inputs: SglangInputs) -> int:
    """The recurrent-state pool: --max-mamba-cache-size states (default one per running
    request), plus one intermediate state per draft token of every running request."""
    shape = inputs.shape
    if not shape.num_state_layers:
        return 0
    per_req = shape.num_state_layers * mamba_state_bytes(
        shape, inputs.tp, 0, "auto", "auto", inputs.model_dtype
    )
    states = inputs.mamba_cache_size or inputs.max_running_requests
    states += inputs.max_running_requests * inputs.speculative_draft_tokens
    return per_req * states


def predict_sglang(inputs: SglangInputs) -> SglangFit:
    if not 0 < inputs.mem_fraction_static <= 1 or inputs.tp < 1:
        raise ValueError("mem_fraction_static must be in (0, 1] and tp positive")
    free_at_start = inputs.gpu.cuda_total - inputs.constants.sglang_startup_overhead
    free_at_start -= inputs.gpu.desktop_reservation_bytes
    static = int(free_at_start * inputs.mem_fraction_static)
    weights = weights_per_gpu(inputs.weights_bytes, inputs.tp)
    mamba = sglang_mamba_pool_bytes(inputs)
    rest = static - weights - mamba
    cell = sglang_cell_bytes(inputs)
    tokens = max(0, rest) // cell // inputs.page_size * inputs.page_size
    wanted = inputs.context_length * inputs.max_running_requests
    return SglangFit(
        kv_pool_tokens=tokens,
        kv_pool_bytes_per_gpu=tokens * cell,
        kv_bytes_per_token_per_gpu=cell,
        mamba_pool_bytes_per_gpu=mamba,
        weights_per_gpu=weights,
        static_bytes_per_gpu=static,
        free_at_start=free_at_start,
        outside_static=free_at_start - static,
        fits=rest > 0 and tokens >= inputs.context_length,
        headroom_tokens=tokens - wanted,
    )
