"""llama.cpp: where a GGUF's weights live (host or GPU), from the model's parameter shares.

The loader keeps the input embedding (`token_embd`) in host memory, the input layer always
running on the CPU; a tied output layer gets its own copy on the GPU. The nextn (MTP) layers
are loaded only when draft-mtp uses them. The bytes of each part are its share of the
parameters at the file's average bytes per parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layers import mtp_head_params
from .shapes import ModelShape


def _attention_params(shape: ModelShape, kv_heads: int, head_dim: int) -> int:
    h = shape.hidden_size
    q_out = shape.num_attention_heads * head_dim
    q = h * q_out * (2 if shape.attn_output_gate else 1)
    return q + 2 * h * kv_heads * head_dim + q_out * h


def _linear_params(shape: ModelShape) -> int:
    """One Gated-DeltaNet layer: fused qkv, gate, out, beta/alpha and conv projections."""
    h = shape.hidden_size
    key = shape.linear_num_key_heads * shape.linear_key_head_dim
    value = shape.linear_num_value_heads * shape.linear_value_head_dim
    conv = 2 * key + value
    return h * conv + 2 * h * value + 2 * h * shape.linear_num_value_heads + conv * 4


def _mamba2_params(shape: ModelShape) -> int:
    h, inner = shape.hidden_size, shape.mamba2_heads * shape.mamba2_head_dim
    groups = 2 * shape.mamba2_groups * shape.mamba2_state
    return h * (2 * inner + groups + shape.mamba2_heads) + inner * h


def _ffn_params(shape: ModelShape) -> int:
    h = shape.hidden_size
    if not (shape.moe_experts and shape.moe_intermediate_size):
        return shape.num_layers * 3 * h * shape.intermediate_size
    moe_layers = shape.moe_layers or shape.num_layers
    per_moe = 3 * h * (shape.moe_experts * shape.moe_intermediate_size)
    per_moe += 3 * h * shape.moe_shared_intermediate_size + h * shape.moe_experts
    dense = (shape.num_layers - moe_layers) * 3 * h * shape.intermediate_size
    return moe_layers * per_moe + dense


def model_params(shape: ModelShape) -> tuple[int, int, int]:
    """(input embedding, everything else but the nextn layers, the nextn layers)."""
    embedding = shape.vocab_size * shape.hidden_size
    body = 0 if shape.tied_embeddings else embedding
    body += shape.num_kv_layers * _attention_params(shape, shape.num_kv_heads, shape.head_dim)
    body += shape.sliding_layers * _attention_params(
        shape, shape.window_kv_heads, shape.window_head_dim
    )
    body += shape.num_linear_layers * _linear_params(shape)
    body += shape.mamba2_layers * _mamba2_params(shape)
    body += _ffn_params(shape)
    return embedding, body, mtp_head_params(shape) if shape.mtp_layers else 0


@dataclass(frozen=True)
class WeightPlacement:
    host: int  # the input embedding: host memory
    gpu: int  # what the GPUs hold together (before any expert offload)
    skipped: int  # nextn layers the loader leaves out (no draft-mtp)


def place_weights(shape: ModelShape, weights_bytes: int, mtp_draft: bool) -> WeightPlacement:
    embedding, body, nextn = model_params(shape)
    total = embedding + body + nextn
    host = weights_bytes * embedding // total
    skipped = 0 if mtp_draft else weights_bytes * nextn // total
    gpu = weights_bytes - host - skipped
    if shape.tied_embeddings:
        gpu += host  # the output layer's own copy of the embedding
    return WeightPlacement(host=host, gpu=gpu, skipped=skipped)
