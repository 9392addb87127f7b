"""Small checkpoints for `model add`: config.json of five architecture families, and GGUF files
written with the `gguf` library (a real header, a little tensor data)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

DENSE: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}

# Qwen3.5/3.6 style: a multimodal wrapper, Gated DeltaNet layers with every 4th full attention.
QWEN_HYBRID: dict[str, Any] = {
    "architectures": ["Qwen3_5ForConditionalGeneration"],
    "model_type": "qwen3_5",
    "text_config": {
        "model_type": "qwen3_5_text",
        "num_hidden_layers": 16,
        "layer_types": ["linear_attention"] * 3 + ["full_attention"],
        "full_attention_interval": 4,
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
        "attn_output_gate": True,
        "mtp_num_hidden_layers": 1,
        "max_position_embeddings": 262144,
        "vocab_size": 248320,
        "dtype": "bfloat16",
    },
    "vision_config": {"depth": 27, "hidden_size": 1152},
}
QWEN_HYBRID["text_config"]["layer_types"] = QWEN_HYBRID["text_config"]["layer_types"] * 4

# Gemma 4 style: five sliding-window layers to one full; the full ones have their own KV shape.
GEMMA_SWA: dict[str, Any] = {
    "architectures": ["Gemma4ForConditionalGeneration"],
    "model_type": "gemma4",
    "text_config": {
        "num_hidden_layers": 12,
        "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 2,
        "sliding_window": 1024,
        "hidden_size": 2816,
        "intermediate_size": 2112,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "num_global_key_value_heads": 2,
        "head_dim": 256,
        "global_head_dim": 512,
        "max_position_embeddings": 262144,
        "vocab_size": 262144,
        "torch_dtype": "bfloat16",
    },
    "vision_config": {"hidden_size": 1152},
}

# Qwen3 MoE, quantized to W4A16 with compressed-tensors.
MOE: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "num_hidden_layers": 48,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "max_position_embeddings": 40960,
    "vocab_size": 151936,
    "torch_dtype": "bfloat16",
    "quantization_config": {
        "quant_method": "compressed-tensors",
        "config_groups": {
            "group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}
        },
    },
}

# Nemotron-H: Mamba-2, attention (*), MLP (-) and MoE (E) layers, ModelOpt NVFP4 weights.
NEMOTRON_PATTERN = "M-M*ME" * 4
MAMBA_HYBRID: dict[str, Any] = {
    "architectures": ["NemotronHForCausalLM"],
    "model_type": "nemotron_h",
    "num_hidden_layers": len(NEMOTRON_PATTERN),
    "hybrid_override_pattern": NEMOTRON_PATTERN,
    "hidden_size": 2688,
    "intermediate_size": 1856,
    "num_attention_heads": 32,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "mamba_num_heads": 64,
    "mamba_head_dim": 64,
    "ssm_state_size": 128,
    "n_groups": 8,
    "conv_kernel": 4,
    "n_routed_experts": 128,
    "num_experts_per_tok": 6,
    "moe_intermediate_size": 1856,
    "n_shared_experts": 1,
    "max_position_embeddings": 262144,
    "vocab_size": 131072,
    "torch_dtype": "bfloat16",
    "auto_map": {"AutoModelForCausalLM": "modeling_nemotron_h.NemotronHForCausalLM"},
    "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"},
}

GENERATION = {"do_sample": True, "temperature": 0.6, "top_p": 0.95, "top_k": 20}


def parameters(c: dict[str, Any]) -> tuple[int, int]:
    """(embedding parameters, the rest) of a dense or MoE transformer: embeddings and an
    untied output layer; per layer q, k, v and o projections, and gate/up/down of the MLP
    or of every expert plus the router."""
    h, heads, kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    head_dim = c.get("head_dim", h // heads)
    attention = h * heads * head_dim + 2 * h * kv * head_dim + heads * head_dim * h
    if "num_experts" in c:
        ffn = 3 * h * c["num_experts"] * c["moe_intermediate_size"] + h * c["num_experts"]
    else:
        ffn = 3 * h * c["intermediate_size"]
    return 2 * c["vocab_size"] * h, c["num_hidden_layers"] * (attention + ffn)


def config_files(config: dict[str, Any], weights: int = 3000) -> dict[str, bytes]:
    """A safetensors checkpoint: config, generation config and two weight shards."""
    return {
        "config.json": json.dumps(config).encode(),
        "generation_config.json": json.dumps(GENERATION).encode(),
        "model-00001-of-00002.safetensors": b"\x01" * weights,
        "model-00002-of-00002.safetensors": b"\x02" * (weights // 2),
        "README.md": b"# a model\n",
    }


# Bytes per element of the safetensors dtypes the fixtures use.
ST_WIDTHS = {"BF16": 2, "F16": 2, "F32": 4, "I8": 1}


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> int:
    """A safetensors file as the format lays it out: the header's length (8 bytes, little
    endian), the JSON header (each tensor's dtype, shape and data_offsets; padded with spaces
    to 8 bytes, as the safetensors library writes it), then the tensors' bytes (zeros).
    Returns the file's size."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * ST_WIDTHS[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + bytes(offset))
    return path.stat().st_size


def write_gguf(
    path: Path,
    *,
    arch: str = "llama",
    tokens: int = 2000,
    tensor_bytes: int = 1 << 20,
    extra: dict[str, Any] | None = None,
) -> bytes:
    """A GGUF file with llama.cpp's metadata keys and one F32 tensor; returns its bytes."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name("Tiny Llama 8B Instruct")
    writer.add_block_count(32)
    writer.add_context_length(131072)
    writer.add_embedding_length(4096)
    writer.add_feed_forward_length(14336)
    writer.add_head_count(32)
    writer.add_head_count_kv(8)
    writer.add_key_length(128)
    writer.add_vocab_size(128256)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.add_uint32("general.sampling.top_k", 40)
    writer.add_float32("general.sampling.temp", 0.6)
    writer.add_token_list([f"token-{i}" for i in range(tokens)])
    writer.add_token_scores([0.0] * tokens)
    for key, value in (extra or {}).items():
        if isinstance(value, list):
            writer.add_array(key, value)
        else:
            writer.add_uint32(key, value)
    writer.add_tensor("token_embd.weight", np.zeros(tensor_bytes // 4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()
