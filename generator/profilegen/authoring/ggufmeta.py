"""Architecture, quantization and sampling facts from a GGUF header's metadata.

Keys are llama.cpp's (`<arch>.block_count`, `<arch>.attention.head_count_kv`, ...). Hybrid
models write some of them per layer: a layer with no KV heads is not an attention layer.
Qwen3-Next-style linear attention and Mamba-2 both use the `<arch>.ssm.*` keys; which one a
file holds is told by `<arch>.full_attention_interval` (linear attention) or its absence.
"""

from __future__ import annotations

from typing import Any

from .facts import DerivationError, Facts, Lookup, Source, every_nth, kind_name

ARCH = "architecture"
# Files that predate `sliding_window_pattern`: llama.cpp's built-in pattern per architecture.
SLIDING_PATTERNS = {"gemma2": 2, "gemma3": 6, "gemma3n": 5, "cohere2": 4}
SAMPLING = {
    "temp": ("temperature", float),
    "top_p": ("top_p", float),
    "top_k": ("top_k", int),
    "min_p": ("min_p", float),
    "penalty_repeat": ("repetition_penalty", float),
}


def _per_layer(value: Any, layers: int) -> list[int] | None:
    """A per-layer array as a list (None for a single value)."""
    if isinstance(value, list):
        if len(value) != layers:
            raise DerivationError(f"a per-layer value has {len(value)} entries for {layers} layers")
        return [int(v) for v in value]
    return None


def _heads(m: Lookup, a: str, facts: Facts, layers: int) -> list[int] | None:
    """Attention heads and KV heads; returns the per-layer KV heads of a hybrid file."""
    heads_key = f"{a}.attention.head_count"
    heads = m.data.get(heads_key)
    per = _per_layer(heads, layers) if heads is not None else None
    if per is not None:
        heads = max(per)
    if heads is None:
        raise DerivationError(f"{m.source.file} has no {heads_key}: cannot tell attention heads")
    facts.put(f"{ARCH}.num_attention_heads", m.typed(heads_key, heads, int), m.source, heads_key)
    kv_key = f"{a}.attention.head_count_kv"
    kv = m.data.get(kv_key, heads)
    kv_per = _per_layer(kv, layers)
    if kv_per is not None:
        kv = max(kv_per)
    facts.put(f"{ARCH}.num_kv_heads", m.typed(kv_key, kv, int), m.source, kv_key)
    return kv_per


def _sliding(m: Lookup, a: str, facts: Facts, layers: int, attention: int) -> int:
    """Sliding-window layers among the attention layers (0 if none)."""
    window = m.put(facts, f"{ARCH}.sliding_window", [f"{a}.attention.sliding_window"])
    if window is None:
        return 0
    key = f"{a}.attention.sliding_window_pattern"
    pattern = m.data.get(key)
    if isinstance(pattern, list):
        sliding = sum(1 for v in pattern if v)
    elif isinstance(pattern, int) and pattern > 0:
        sliding = layers - every_nth(layers, pattern)
    elif a in SLIDING_PATTERNS:
        sliding, key = layers - every_nth(layers, SLIDING_PATTERNS[a]), "general.architecture"
    else:
        facts.values.pop(f"{ARCH}.sliding_window")
        facts.provenance.pop(f"{ARCH}.sliding_window")
        facts.notes.append(
            f"{m.source.file} sets {a}.attention.sliding_window without a layer pattern: "
            "every layer is recorded as full attention"
        )
        return 0
    if sliding:
        facts.put(f"{ARCH}.sliding_window_layers", min(sliding, attention - 1), m.source, key)
    return sliding


def _ssm(m: Lookup, a: str, facts: Facts, layers: int, linear: bool) -> None:
    """Linear attention (Gated DeltaNet) or Mamba-2 from the ssm keys."""
    keys = {k: f"{a}.ssm.{k}" for k in ("conv_kernel", "state_size", "group_count")}
    keys |= {k: f"{a}.ssm.{k}" for k in ("time_step_rank", "inner_size")}
    missing = [v for v in keys.values() if v not in m.data]
    if missing:
        raise DerivationError(f"{m.source.file} has no {', '.join(missing)}: cannot size the state")
    value = {k: m.typed(v, m.data[v], int) for k, v in keys.items()}
    heads = value["time_step_rank"]
    if linear:
        base = f"{ARCH}.linear_attention"
        facts.put(f"{base}.num_key_heads", value["group_count"], m.source, keys["group_count"])
        facts.put(f"{base}.num_value_heads", heads, m.source, keys["time_step_rank"])
        facts.put(f"{base}.key_head_dim", value["state_size"], m.source, keys["state_size"])
        facts.put(
            f"{base}.value_head_dim", value["inner_size"] // heads, m.source, keys["inner_size"]
        )
        facts.put(f"{base}.conv_kernel", value["conv_kernel"], m.source, keys["conv_kernel"])
        return
    base = f"{ARCH}.mamba"
    facts.put(f"{base}.layers", layers, m.source, f"{a}.attention.head_count_kv")
    facts.put(f"{base}.num_heads", heads, m.source, keys["time_step_rank"])
    facts.put(f"{base}.head_dim", value["inner_size"] // heads, m.source, keys["inner_size"])
    facts.put(f"{base}.state_size", value["state_size"], m.source, keys["state_size"])
    facts.put(f"{base}.n_groups", value["group_count"], m.source, keys["group_count"])
    facts.put(f"{base}.conv_kernel", value["conv_kernel"], m.source, keys["conv_kernel"])


def _kinds(m: Lookup, a: str, facts: Facts, layers: int, kv_per: list[int] | None) -> None:
    interval_key = f"{a}.full_attention_interval"
    if interval_key in m.data:
        full = every_nth(layers, m.typed(interval_key, m.data[interval_key], int))
        facts.put(f"{ARCH}.full_attention_layers", full, m.source, interval_key)
        _ssm(m, a, facts, layers - full, linear=True)
        return
    kv_key = f"{a}.attention.head_count_kv"
    attention = sum(1 for v in kv_per if v) if kv_per is not None else layers
    if attention == 0:
        raise DerivationError(f"{m.source.file}: {kv_key} names no attention layer")
    sliding = _sliding(m, a, facts, layers, attention)
    full = attention - min(sliding, attention - 1)
    facts.put(f"{ARCH}.full_attention_layers", full, m.source, kv_key if kv_per else None)
    if attention < layers:
        ff = _per_layer(m.data.get(f"{a}.feed_forward_length"), layers)
        if ff is not None and kv_per is not None:  # Nemotron-H: MLP-only layers are neither
            mamba = sum(1 for k, f in zip(kv_per, ff, strict=True) if not k and not f)
        else:
            mamba = layers - attention
        _ssm(m, a, facts, mamba, linear=False)


def _moe(m: Lookup, a: str, facts: Facts) -> None:
    base = f"{ARCH}.moe"
    if m.put(facts, f"{base}.num_experts", [f"{a}.expert_count"], least=0) is None:
        return
    m.need(facts, f"{base}.experts_per_token", [f"{a}.expert_used_count"])
    m.put(facts, f"{base}.moe_intermediate_size", [f"{a}.expert_feed_forward_length"])
    m.put(facts, f"{base}.shared_experts", [f"{a}.expert_shared_count"], least=0)


def gguf_facts(metadata: dict[str, Any], source: Source) -> Facts:
    """Architecture facts, the quantization name and sampling defaults of a GGUF file."""
    facts = Facts()
    m = Lookup(metadata, source)
    a = metadata.get("general.architecture")
    if not isinstance(a, str) or not a:
        raise DerivationError(f"{source.file} has no general.architecture")
    a = kind_name(a, source.file, "general.architecture")
    layers = m.need(facts, f"{ARCH}.num_layers", [f"{a}.block_count"])
    hidden = m.need(facts, f"{ARCH}.hidden_size", [f"{a}.embedding_length"])
    kv_per = _heads(m, a, facts, layers)
    heads = facts.values[f"{ARCH}.num_attention_heads"]
    if m.put(facts, f"{ARCH}.head_dim", [f"{a}.attention.key_length"]) is None:
        derived = f"{a}.embedding_length / {a}.attention.head_count"
        facts.put(f"{ARCH}.head_dim", hidden // heads, source, derived)
    ff_key = f"{a}.feed_forward_length"
    ff = metadata.get(ff_key)
    if ff is not None:
        ff = max(ff) if isinstance(ff, list) else ff
        if ff:
            facts.put(f"{ARCH}.intermediate_size", m.typed(ff_key, ff, int), source, ff_key)
    if m.put(facts, f"{ARCH}.vocab_size", [f"{a}.vocab_size", "tokenizer.ggml.tokens"]) is None:
        facts.notes.append(f"{source.file} does not say the vocabulary size")
    m.need(facts, f"{ARCH}.max_position_embeddings", [f"{a}.context_length"])
    _kinds(m, a, facts, layers, kv_per)
    _moe(m, a, facts)
    m.put(facts, f"{ARCH}.mtp_layers", [f"{a}.nextn_predict_layers"], least=0)
    for key, (name, kind) in SAMPLING.items():
        m.put(facts, f"sampling.{name}", [f"general.sampling.{key}"], kind, least=-1)
    return facts


def quantization_name(metadata: dict[str, Any], tensor_types: dict[str, int]) -> tuple[str, str]:
    """The file's quantization (`Q4_K_M`) and the key it was read from."""
    from gguf import LlamaFileType

    raw = metadata.get("general.file_type")
    if isinstance(raw, int):
        try:
            return LlamaFileType(raw).name.removeprefix("MOSTLY_").removeprefix("ALL_"), (
                "general.file_type"
            )
        except ValueError:
            pass
    # No file type: the most common tensor type stands for the file.
    if tensor_types:
        return max(sorted(tensor_types), key=lambda t: tensor_types[t]), "tensor types"
    raise DerivationError("the GGUF file names no quantization (general.file_type)")
