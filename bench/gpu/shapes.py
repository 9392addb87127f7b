"""The GGUF that llama.cpp expects for a registry model: architecture keys and every tensor.

From the registry's facts (layers and their kinds, heads, KV heads, head dims, linear-attention
state, sliding windows, vocabulary) and the weights' quantization, a spec: the GGUF's
architecture, its key/value metadata, and each tensor's name, shape (ggml order: the row
first) and storage type, as the build's loader creates them (src/models/<arch>.cpp of the
pinned build). Facts the registry does not hold (RoPE details, norm epsilons) take values
that change no memory. A model whose family has no spec here is reported as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from profilegen.model.model import Architecture, Artifact, Model

# The registry family -> the build's architecture and the vocabulary GGUF its source ships.
ARCHS = {
    "dense": ("qwen2", "qwen2"),
    "qwen35-dense": ("qwen35", "qwen35"),
    "qwen3-next-hybrid": ("qwen35", "qwen35"),
    "qwen3-next-moe": ("qwen35moe", "qwen35"),
    "gemma4-unified": ("gemma4", "gemma-4"),
    "gemma4-swa-dense": ("gemma4", "gemma-4"),
}
# ggml block sizes (values per block) by storage type.
BLOCK = {"F32": 1, "F16": 1, "BF16": 1, "Q8_0": 32, "Q4_0": 32, "Q5_0": 32, "Q3_K": 256,
         "Q4_K": 256, "Q5_K": 256, "Q6_K": 256, "IQ4_XS": 256}  # fmt: skip
# A GGUF file's quantization -> (type of the weight matrices, type of the output matrix), as
# llama-quantize lays them out (the output layer kept at 6 bits in the k- and i-quants).
QUANTS = {
    "Q8_0": ("Q8_0", "Q8_0"),
    "Q8_K_XL": ("Q8_0", "Q8_0"),
    "Q6_K": ("Q6_K", "Q6_K"),
    "Q5_K_M": ("Q5_K", "Q6_K"),
    "Q5_K_S": ("Q5_K", "Q6_K"),
    "Q4_K_M": ("Q4_K", "Q6_K"),
    "Q4_K_S": ("Q4_K", "Q6_K"),
    "Q3_K_M": ("Q3_K", "Q6_K"),
    "IQ4_XS": ("IQ4_XS", "Q6_K"),
}
# Types of llama.cpp forks that the mainline build (and the gguf package) do not have.
FORK_QUANTS = {"IQ4_KS": "ik_llama.cpp", "IQ4_KSS": "ik_llama.cpp", "IQ2_KS": "ik_llama.cpp"}


class NoSpec(ValueError):
    """The registry holds too little about the model (or its family) to write its GGUF."""


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]  # ggml order: ne0 (the row) first
    kind: str  # "matrix" (the weights' type), "output", "f32"


def quantization(artifact: Artifact) -> str:
    """The file's quantization from the registry (or the file name): Q4_K_M, IQ4_XS, ..."""
    names = [artifact.quantization or "", *artifact.files]
    for text in names:
        for quant in sorted([*QUANTS, *FORK_QUANTS], key=len, reverse=True):
            spelt = (quant, quant.replace("_", ""))
            if any(re.search(rf"(?<![A-Z0-9]){q}(?![A-Z0-9])", text.upper()) for q in spelt):
                if quant in FORK_QUANTS:
                    raise NoSpec(
                        f"{quant} is an {FORK_QUANTS[quant]} type: the mainline build cannot "
                        "load it"
                    )
                return quant
    raise NoSpec(f"no known GGUF quantization in {names} (known: {', '.join(QUANTS)})")


def storage(tensor: Tensor, quant: str) -> str:
    """The type a tensor is stored in: its class's, where its rows hold whole blocks."""
    matrix, output = QUANTS[quant]
    want = {"matrix": matrix, "output": output, "f32": "F32"}[tensor.kind]
    for kind in (want, "Q8_0", "F16"):
        if tensor.shape[0] % BLOCK[kind] == 0:
            return kind
    return "F32"


def _common(arch: Architecture, name: str) -> list[tuple[str, str, Any]]:
    p = name
    return [
        (f"{p}.context_length", "u32", arch.max_position_embeddings),
        (f"{p}.embedding_length", "u32", arch.hidden_size),
        (f"{p}.feed_forward_length", "u32", arch.intermediate_size or 0),
        (f"{p}.attention.head_count", "u32", arch.num_attention_heads),
        (f"{p}.attention.layer_norm_rms_epsilon", "f32", 1e-6),
        (f"{p}.rope.freq_base", "f32", 1_000_000.0),
    ]


def _embeddings(arch: Architecture, vocab: int, tied: bool) -> list[Tensor]:
    h = arch.hidden_size
    out = [
        Tensor("token_embd.weight", (h, vocab), "matrix"),
        Tensor("output_norm.weight", (h,), "f32"),
    ]
    if not tied:
        out.append(Tensor("output.weight", (h, vocab), "output"))
    return out


def _ffn(il: int, h: int, ff: int) -> list[Tensor]:
    b = f"blk.{il}."
    return [
        Tensor(b + "ffn_gate.weight", (h, ff), "matrix"),
        Tensor(b + "ffn_up.weight", (h, ff), "matrix"),
        Tensor(b + "ffn_down.weight", (ff, h), "matrix"),
    ]


def _needs(arch: Architecture, model: Model, *fields: str) -> None:
    missing = [f for f in fields if getattr(arch, f) is None]
    if missing:
        raise NoSpec(f"model {model.id} has no architecture.{', '.join(missing)}")


def qwen2(model: Model) -> tuple[list[tuple[str, str, Any]], list[Tensor]]:
    arch = model.architecture
    _needs(arch, model, "intermediate_size", "vocab_size")
    h, kv = arch.hidden_size, arch.num_kv_heads * arch.head_dim
    keys = [*_common(arch, "qwen2"), ("qwen2.block_count", "u32", arch.num_layers),
            ("qwen2.attention.head_count_kv", "u32", arch.num_kv_heads)]  # fmt: skip
    tensors = _embeddings(arch, arch.vocab_size or 0, tied=arch.tied_embeddings)
    for il in range(arch.num_layers):
        b = f"blk.{il}."
        q = arch.num_attention_heads * arch.head_dim
        tensors += [
            Tensor(b + "attn_norm.weight", (h,), "f32"),
            Tensor(b + "attn_q.weight", (h, q), "matrix"),
            Tensor(b + "attn_k.weight", (h, kv), "matrix"),
            Tensor(b + "attn_v.weight", (h, kv), "matrix"),
            Tensor(b + "attn_q.bias", (q,), "f32"),
            Tensor(b + "attn_k.bias", (kv,), "f32"),
            Tensor(b + "attn_v.bias", (kv,), "f32"),
            Tensor(b + "attn_output.weight", (q, h), "matrix"),
            Tensor(b + "ffn_norm.weight", (h,), "f32"),
            *_ffn(il, h, arch.intermediate_size or 0),
        ]
    return keys, tensors


def _qwen35_attention(arch: Architecture, il: int) -> list[Tensor]:
    h, hd = arch.hidden_size, arch.head_dim
    q = arch.num_attention_heads * hd * (2 if arch.attn_output_gate else 1)
    kv = arch.num_kv_heads * hd
    b = f"blk.{il}."
    return [
        Tensor(b + "attn_q.weight", (h, q), "matrix"),
        Tensor(b + "attn_k.weight", (h, kv), "matrix"),
        Tensor(b + "attn_v.weight", (h, kv), "matrix"),
        Tensor(b + "attn_output.weight", (arch.num_attention_heads * hd, h), "matrix"),
        Tensor(b + "attn_q_norm.weight", (hd,), "f32"),
        Tensor(b + "attn_k_norm.weight", (hd,), "f32"),
    ]


def _qwen35_linear(arch: Architecture, il: int) -> list[Tensor]:
    lin = arch.linear_attention
    assert lin is not None
    h, b = arch.hidden_size, f"blk.{il}."
    key_dim = lin.num_key_heads * lin.key_head_dim
    value_dim = lin.num_value_heads * lin.value_head_dim
    return [
        Tensor(b + "attn_qkv.weight", (h, 2 * key_dim + value_dim), "matrix"),
        Tensor(b + "attn_gate.weight", (h, value_dim), "matrix"),
        Tensor(b + "ssm_conv1d.weight", (lin.conv_kernel, 2 * key_dim + value_dim), "f32"),
        Tensor(b + "ssm_dt.bias", (lin.num_value_heads,), "f32"),
        Tensor(b + "ssm_a", (lin.num_value_heads,), "f32"),
        Tensor(b + "ssm_beta.weight", (h, lin.num_value_heads), "matrix"),
        Tensor(b + "ssm_alpha.weight", (h, lin.num_value_heads), "matrix"),
        Tensor(b + "ssm_norm.weight", (lin.value_head_dim,), "f32"),
        Tensor(b + "ssm_out.weight", (value_dim, h), "matrix"),
    ]


def _moe_ffn(arch: Architecture, il: int) -> list[Tensor]:
    moe = arch.moe
    assert moe is not None and moe.moe_intermediate_size is not None
    h, b, n, ff = arch.hidden_size, f"blk.{il}.", moe.num_experts, moe.moe_intermediate_size
    shared = (moe.shared_intermediate_size or ff) * moe.shared_experts
    out = [
        Tensor(b + "ffn_gate_inp.weight", (h, n), "f32"),
        Tensor(b + "ffn_gate_exps.weight", (h, ff, n), "matrix"),
        Tensor(b + "ffn_up_exps.weight", (h, ff, n), "matrix"),
        Tensor(b + "ffn_down_exps.weight", (ff, h, n), "matrix"),
    ]
    if shared:
        out += [
            Tensor(b + "ffn_gate_inp_shexp.weight", (h,), "f32"),
            Tensor(b + "ffn_gate_shexp.weight", (h, shared), "matrix"),
            Tensor(b + "ffn_up_shexp.weight", (h, shared), "matrix"),
            Tensor(b + "ffn_down_shexp.weight", (shared, h), "matrix"),
        ]
    return out


def qwen35moe(model: Model) -> tuple[list[tuple[str, str, Any]], list[Tensor]]:
    """qwen35 with every feed-forward an MoE block (routed experts and a shared one)."""
    arch, moe = model.architecture, model.architecture.moe
    if moe is None or moe.moe_intermediate_size is None:
        raise NoSpec(f"model {model.id} has no architecture.moe.moe_intermediate_size")
    keys, tensors = qwen35(model, ffn=lambda il: _moe_ffn(arch, il), name="qwen35moe")
    shared = (moe.shared_intermediate_size or moe.moe_intermediate_size) * moe.shared_experts
    keys += [
        ("qwen35moe.expert_count", "u32", moe.num_experts),
        ("qwen35moe.expert_used_count", "u32", moe.experts_per_token),
        ("qwen35moe.expert_feed_forward_length", "u32", moe.moe_intermediate_size),
        ("qwen35moe.expert_shared_feed_forward_length", "u32", shared),
    ]
    return keys, tensors


def qwen35(
    model: Model, ffn: Any = None, name: str = "qwen35"
) -> tuple[list[tuple[str, str, Any]], list[Tensor]]:
    arch, lin = model.architecture, model.architecture.linear_attention
    _needs(arch, model, "vocab_size", "linear_attention")
    if ffn is None:
        _needs(arch, model, "intermediate_size")
    assert lin is not None
    if lin.key_head_dim != lin.value_head_dim:
        raise NoSpec(f"model {model.id}: qwen35 takes one SSM head size for keys and values")
    interval = arch.num_layers // arch.full_attention_layers
    if arch.num_layers // interval != arch.full_attention_layers:
        raise NoSpec(f"model {model.id}: full-attention layers are not every n-th layer")
    h, ff = arch.hidden_size, arch.intermediate_size or 0
    p = name
    keys = [*_common(arch, p),
            (f"{p}.block_count", "u32", arch.num_layers + arch.mtp_layers),
            (f"{p}.attention.head_count_kv", "u32", arch.num_kv_heads),
            (f"{p}.attention.key_length", "u32", arch.head_dim),
            (f"{p}.attention.value_length", "u32", arch.head_dim),
            (f"{p}.rope.dimension_count", "u32", arch.head_dim // 4),
            (f"{p}.rope.dimension_sections", "i32[]", [11, 11, 10, 0]),
            (f"{p}.ssm.conv_kernel", "u32", lin.conv_kernel),
            (f"{p}.ssm.state_size", "u32", lin.key_head_dim),
            (f"{p}.ssm.group_count", "u32", lin.num_key_heads),
            (f"{p}.ssm.time_step_rank", "u32", lin.num_value_heads),
            (f"{p}.ssm.inner_size", "u32", lin.num_value_heads * lin.value_head_dim),
            (f"{p}.full_attention_interval", "u32", interval),
            (f"{p}.nextn_predict_layers", "u32", arch.mtp_layers)]  # fmt: skip
    tensors = _embeddings(arch, arch.vocab_size or 0, tied=arch.tied_embeddings)
    for il in range(arch.num_layers + arch.mtp_layers):
        b = f"blk.{il}."
        tensors += [
            Tensor(b + "attn_norm.weight", (h,), "f32"),
            Tensor(b + "post_attention_norm.weight", (h,), "f32"),
        ]
        full = il >= arch.num_layers or (il + 1) % interval == 0
        tensors += _qwen35_attention(arch, il) if full else _qwen35_linear(arch, il)
        tensors += ffn(il) if ffn is not None else _ffn(il, h, ff)
        if il >= arch.num_layers:  # the MTP (NextN) block after the trunk
            tensors += [
                Tensor(b + "nextn.eh_proj.weight", (2 * h, h), "matrix"),
                Tensor(b + "nextn.enorm.weight", (h,), "f32"),
                Tensor(b + "nextn.hnorm.weight", (h,), "f32"),
                Tensor(b + "nextn.shared_head_norm.weight", (h,), "f32"),
            ]
    return keys, tensors


def _gemma4_layer(arch: Architecture, il: int, swa: bool) -> list[Tensor]:
    h, b = arch.hidden_size, f"blk.{il}."
    heads = arch.num_attention_heads
    hd = (arch.sliding_head_dim or arch.head_dim) if swa else arch.head_dim
    kv = (arch.sliding_kv_heads or arch.num_kv_heads) if swa else arch.num_kv_heads
    out = [
        Tensor(b + "attn_norm.weight", (h,), "f32"),
        Tensor(b + "attn_q.weight", (h, heads * hd), "matrix"),
        Tensor(b + "attn_k.weight", (h, kv * hd), "matrix"),
        Tensor(b + "attn_v.weight", (h, kv * hd), "matrix"),
        Tensor(b + "attn_output.weight", (heads * hd, h), "matrix"),
        Tensor(b + "attn_q_norm.weight", (hd,), "f32"),
        Tensor(b + "attn_k_norm.weight", (hd,), "f32"),
        Tensor(b + "post_attention_norm.weight", (h,), "f32"),
        Tensor(b + "ffn_norm.weight", (h,), "f32"),
        *_ffn(il, h, arch.intermediate_size or 0),
        Tensor(b + "post_ffw_norm.weight", (h,), "f32"),
    ]
    return out


def gemma4(model: Model) -> tuple[list[tuple[str, str, Any]], list[Tensor]]:
    arch = model.architecture
    _needs(arch, model, "intermediate_size", "vocab_size", "sliding_window")
    if arch.moe is not None or arch.kv_shared_layers:
        raise NoSpec(f"model {model.id}: Gemma 4 experts and shared-KV layers are not written")
    n, full = arch.num_layers, arch.full_attention_layers
    step = n // full
    pattern = [(il + 1) % step != 0 for il in range(n)]
    if pattern.count(False) != full or pattern.count(True) != arch.sliding_window_layers:
        raise NoSpec(f"model {model.id}: full-attention layers are not every n-th layer")
    swa_kv = arch.sliding_kv_heads or arch.num_kv_heads
    swa_hd = arch.sliding_head_dim or arch.head_dim
    keys = [*_common(arch, "gemma4"),
            ("gemma4.block_count", "u32", n),
            ("gemma4.attention.head_count_kv", "u32[]",
             [swa_kv if s else arch.num_kv_heads for s in pattern]),
            ("gemma4.attention.key_length", "u32", arch.head_dim),
            ("gemma4.attention.value_length", "u32", arch.head_dim),
            ("gemma4.attention.key_length_swa", "u32", swa_hd),
            ("gemma4.attention.value_length_swa", "u32", swa_hd),
            ("gemma4.attention.sliding_window", "u32", arch.sliding_window),
            ("gemma4.attention.sliding_window_pattern", "bool[]", pattern),
            ("gemma4.attention.shared_kv_layers", "u32", 0),
            ("gemma4.embedding_length_per_layer_input", "u32", 0),
            ("gemma4.rope.dimension_count", "u32", arch.head_dim),
            ("gemma4.rope.dimension_count_swa", "u32", swa_hd),
            ("gemma4.rope.freq_base_swa", "f32", 10_000.0),
            ("gemma4.final_logit_softcapping", "f32", 30.0)]  # fmt: skip
    tensors = _embeddings(arch, arch.vocab_size or 0, tied=arch.tied_embeddings)
    # One proportional-RoPE table, shared by every full-attention layer.
    tensors.append(Tensor("rope_freqs.weight", (arch.head_dim // 2,), "f32"))
    for il in range(n):
        tensors += _gemma4_layer(arch, il, pattern[il])
    return keys, tensors


WRITERS = {"qwen2": qwen2, "qwen35": qwen35, "qwen35moe": qwen35moe, "gemma4": gemma4}


def gguf_spec(model: Model, artifact: Artifact) -> dict[str, Any]:
    """The GGUF of `model` at `artifact`'s quantization, as JSON-ready data."""
    if model.family not in ARCHS:
        raise NoSpec(f"model {model.id}: no GGUF spec for its family {model.family!r}")
    arch_name, vocab = ARCHS[model.family]
    quant = quantization(artifact)
    keys, tensors = WRITERS[arch_name](model)
    return {
        "arch": arch_name,
        "vocab": vocab,
        "n_vocab": model.architecture.vocab_size,
        "quant": quant,
        "keys": [list(k) for k in keys],
        "tensors": [[t.name, list(t.shape), storage(t, quant)] for t in tensors],
    }
