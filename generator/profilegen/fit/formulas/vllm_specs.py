"""A vLLM profile's KV cache layers as the question vLLM's own sizing code answers.

`pool_query` turns the registry's model facts (`VllmInputs`) into the layers vLLM makes KV
cache specs of, per GPU: full attention (FullAttentionSpec), sliding window
(SlidingWindowSpec), Gated-DeltaNet and Mamba-2 state (MambaSpec, shapes from the
release's own MambaStateShapeCalculator), and the drafter's attention layers, with the
cache dtype, the scheduler's in-flight tokens (async scheduling keeps two batches in flight)
and the bytes left for the pool. `facts/probes/vllm_kv_pool.py` builds the specs in the
release's environment and asks `get_kv_cache_configs`; this module stays pure data.
"""

from __future__ import annotations

from typing import Any

from .common import VLLM_KERNEL_BLOCK_ALIGNMENT
from .layers import kv_heads_per_gpu
from .shapes import VllmInputs

# Speculative methods with which vLLM keeps async scheduling on (config/vllm.py: EAGLE-type
# methods, MTP and DFlash); an external draft model turns it off.
ASYNC_DRAFTERS = ("mtp", "dflash", "eagle")


def _attention(
    kind: str, count: int, heads: int, dim: int, tp: int, window: int = 0
) -> dict[str, Any]:
    layer: dict[str, Any] = {
        "kind": kind,
        "count": count,
        "num_kv_heads": kv_heads_per_gpu(heads, tp),
        "head_size": dim,
    }
    if window:
        layer["sliding_window"] = window
    return layer


def _state_layer(inputs: VllmInputs) -> dict[str, Any] | None:
    shape = inputs.shape
    if shape.num_linear_layers:
        return {
            "kind": "gdn",
            "count": shape.num_linear_layers,
            "num_k_heads": shape.linear_num_key_heads,
            "num_v_heads": shape.linear_num_value_heads,
            "head_k_dim": shape.linear_key_head_dim,
            "head_v_dim": shape.linear_value_head_dim,
            "conv_kernel": shape.linear_conv_kernel,
        }
    if shape.mamba2_layers:
        return {
            "kind": "mamba2",
            "count": shape.mamba2_layers,
            "intermediate_size": shape.mamba2_heads * shape.mamba2_head_dim,
            "n_groups": shape.mamba2_groups,
            "num_heads": shape.mamba2_heads,
            "head_dim": shape.mamba2_head_dim,
            "state_size": shape.mamba2_state,
            "conv_kernel": shape.mamba2_conv_kernel,
        }
    return None


def pool_layers(inputs: VllmInputs) -> list[dict[str, Any]]:
    """The target's full, sliding and recurrent layers, then the drafter's KV layers."""
    shape, tp = inputs.shape, inputs.tp
    full, sliding = shape.own_kv_layers()
    layers = []
    if full:
        layers.append(_attention("full", full, shape.num_kv_heads, shape.head_dim, tp))
    if sliding:
        layers.append(
            _attention(
                "sliding", sliding, shape.window_kv_heads, shape.window_head_dim, tp,
                shape.sliding_window,
            )
        )  # fmt: skip
    state = _state_layer(inputs)
    if state is not None:
        layers.append(state)
    d = inputs.drafter
    if inputs.drafter_active and d is not None and d.num_kv_layers:
        heads = d.num_kv_heads or shape.num_kv_heads
        dim = d.head_dim or shape.head_dim
        kind = "sliding" if d.sliding_window else "full"
        layers.append(_attention(kind, d.num_kv_layers, heads, dim, tp, d.sliding_window or 0))
    return layers


def async_scheduling(inputs: VllmInputs) -> bool:
    """Whether vLLM schedules asynchronously: on unless the drafter is an external model."""
    if inputs.async_scheduling is not None:
        return inputs.async_scheduling
    d = inputs.drafter
    return not (inputs.drafter_active and d is not None and d.kind not in ASYNC_DRAFTERS)


def pool_query(inputs: VllmInputs, available_bytes: int) -> dict[str, Any]:
    """The question for `get_kv_cache_configs`: one GPU's layers and the bytes left for KV."""
    ssm = inputs.mamba_ssm_cache_dtype
    return {
        "layers": pool_layers(inputs),
        "tp": inputs.tp,
        "cache_dtype": inputs.kv_cache_dtype,
        "model_dtype": inputs.model_dtype,
        "mamba_cache_dtype": inputs.mamba_cache_dtype,
        "mamba_ssm_cache_dtype": inputs.shape.ssm_state_dtype if ssm == "auto" else ssm,
        "mamba_cache_mode": inputs.mamba_cache_mode,
        "num_speculative_tokens": inputs.spec_tokens,
        "max_model_len": inputs.max_model_len,
        "max_num_batched_tokens": inputs.max_num_batched_tokens,
        "max_num_seqs": inputs.max_num_seqs,
        "async_scheduling": async_scheduling(inputs),
        "prefix_caching": inputs.mamba_cache_mode != "none",
        "kernel_block_size": VLLM_KERNEL_BLOCK_ALIGNMENT,
        "attention_backend": inputs.attention_backend,
        "available_memory": max(0, available_bytes),
    }
