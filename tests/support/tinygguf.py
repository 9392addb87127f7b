"""Tiny llama-architecture GGUFs for real engine boots: random F16 weights, a real tokenizer.

The tokenizer is copied from a vocabulary-only GGUF that llama.cpp's source ships
(`models/ggml-vocab-*.gguf`), so llama-server tokenizes and detokenizes for real; the weights
are seeded random values (the answers are nonsense, every step of serving them is real).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np

# Keys of the vocabulary GGUF that make the tokenizer (the rest describes its own model).
_TOKENIZER = "tokenizer."


@dataclass(frozen=True)
class TinyLlama:
    """The facts of a tiny model, as the registry would state them."""

    layers: int = 2
    hidden: int = 256
    heads: int = 4
    kv_heads: int = 2
    ffn: int = 512
    context: int = 4096
    seed: int = 0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


# The format's scalar types as numpy reads them (gguf's own table), then string and array.
_NUMPY = gguf.GGUFReader.gguf_scalar_to_np
_STRING, _ARRAY = gguf.GGUFValueType.STRING, gguf.GGUFValueType.ARRAY


def _metadata(path: Path, wanted: str) -> dict[str, tuple[int, Any]]:
    """The header's keys that start with `wanted`: key -> (value type, value), arrays as
    lists of plain values. (`gguf.GGUFReader` takes seconds over a tokenizer of 32,000
    entries: it builds a field for every element.)"""
    data = path.read_bytes()
    if data[:4] != b"GGUF":
        raise ValueError(f"{path.name} is not a GGUF file")
    at = 8  # past the magic and the version

    def numbers(kind: int, count: int) -> list[Any]:
        nonlocal at
        values = np.frombuffer(data, _NUMPY[gguf.GGUFValueType(kind)], count, at)
        at += values.nbytes
        return values.tolist()  # type: ignore[no-any-return]

    def take(kind: int) -> Any:
        nonlocal at
        if kind == _STRING:
            size = numbers(gguf.GGUFValueType.UINT64, 1)[0]
            at += size
            return data[at - size : at].decode("utf-8")
        if kind == _ARRAY:
            inner = numbers(gguf.GGUFValueType.UINT32, 1)[0]
            count = numbers(gguf.GGUFValueType.UINT64, 1)[0]
            if inner in (_STRING, _ARRAY):
                return [take(inner) for _ in range(count)]
            return numbers(inner, count)
        return numbers(kind, 1)[0]

    found: dict[str, tuple[int, Any]] = {}
    _tensors, keys = numbers(gguf.GGUFValueType.UINT64, 2)
    for _ in range(keys):
        key = take(_STRING)
        kind = numbers(gguf.GGUFValueType.UINT32, 1)[0]
        value = take(kind)
        if key.startswith(wanted):
            found[key] = (kind, value)
    return found


def _copy_tokenizer(writer: gguf.GGUFWriter, vocab: Path) -> int:
    """Copies every tokenizer key of `vocab` into `writer`; the number of tokens."""
    n_tokens = 0
    for key, (kind, value) in _metadata(vocab, _TOKENIZER).items():
        if kind == _ARRAY:
            writer.add_array(key, value)
            if key == "tokenizer.ggml.tokens":
                n_tokens = len(value)
        elif kind == _STRING:
            writer.add_string(key, value)
        elif kind == gguf.GGUFValueType.BOOL:
            writer.add_bool(key, value)
        else:
            writer.add_key_value(key, value, gguf.GGUFValueType(kind))
    if not n_tokens:
        raise ValueError(f"{vocab.name} holds no tokenizer.ggml.tokens")
    return n_tokens


def tiny_vocab(path: Path) -> int:
    """The vocabulary size of a GGUF this module wrote."""
    return int(_metadata(path, "llama.vocab_size")["llama.vocab_size"][1])


def write_tiny_llama(path: Path, vocab: Path, model: TinyLlama = TinyLlama()) -> int:
    """Writes the model to `path`; its vocabulary size."""
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("profilegen tiny llama")
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    n_vocab = _copy_tokenizer(writer, vocab)
    writer.add_vocab_size(n_vocab)
    writer.add_context_length(model.context)
    writer.add_embedding_length(model.hidden)
    writer.add_block_count(model.layers)
    writer.add_feed_forward_length(model.ffn)
    writer.add_head_count(model.heads)
    writer.add_head_count_kv(model.kv_heads)
    writer.add_rope_dimension_count(model.head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    rng = np.random.default_rng(model.seed)

    def matrix(rows: int, cols: int) -> np.ndarray[Any, Any]:
        return (rng.standard_normal((rows, cols)) * 0.02).astype(np.float16)

    h, kv = model.hidden, model.kv_heads * model.head_dim
    writer.add_tensor("token_embd.weight", matrix(n_vocab, h))
    writer.add_tensor("output_norm.weight", np.ones(h, dtype=np.float32))
    writer.add_tensor("output.weight", matrix(n_vocab, h))
    for i in range(model.layers):
        blk = f"blk.{i}."
        writer.add_tensor(blk + "attn_norm.weight", np.ones(h, dtype=np.float32))
        writer.add_tensor(blk + "attn_q.weight", matrix(h, h))
        writer.add_tensor(blk + "attn_k.weight", matrix(kv, h))
        writer.add_tensor(blk + "attn_v.weight", matrix(kv, h))
        writer.add_tensor(blk + "attn_output.weight", matrix(h, h))
        writer.add_tensor(blk + "ffn_norm.weight", np.ones(h, dtype=np.float32))
        writer.add_tensor(blk + "ffn_gate.weight", matrix(model.ffn, h))
        writer.add_tensor(blk + "ffn_up.weight", matrix(model.ffn, h))
        writer.add_tensor(blk + "ffn_down.weight", matrix(h, model.ffn))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return n_vocab
