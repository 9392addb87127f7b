"""Architecture and quantization facts from a checkpoint's config.json (transformers layout).

Layer kinds come from whichever form the family uses: a `layer_types` list (Qwen3.5/3.6,
Gemma, gpt-oss, Granite hybrids), Nemotron-H's `hybrid_override_pattern`, an interval
(`full_attention_interval`, Gemma 3's `sliding_window_pattern`) or Jamba's attention period.
Multimodal checkpoints keep the language model's facts under `text_config`.
"""

from __future__ import annotations

from typing import Any

from .facts import DerivationError, Facts, Lookup, Source, every_from, every_nth

ARCH = "architecture"
# Keys naming the language model's own config inside a multimodal one.
TEXT_CONFIGS = ("text_config", "llm_config", "language_config")
FULL = {"full_attention", "attention", "global_attention", "global"}
SLIDING = {"sliding_attention", "sliding_window", "local_attention", "local"}
LINEAR = {"linear_attention"}
MAMBA = {"mamba", "mamba2"}


def text_lookup(config: dict[str, Any], source: Source) -> Lookup:
    for name in TEXT_CONFIGS:
        inner = config.get(name)
        if isinstance(inner, dict) and inner:
            return Lookup(inner, source, f"{name}.")
    return Lookup(config, source)


Kinds = tuple[dict[str, int], str]


def _from_list(t: Lookup, key: str, kinds: Any, layers: int) -> dict[str, int]:
    if not isinstance(kinds, list) or len(kinds) != layers:
        raise DerivationError(
            f"{t.source.file}: {key} must list one kind per layer ({layers} layers)"
        )
    names = [str(kind).lower() for kind in kinds]
    unknown = sorted(set(names) - FULL - SLIDING - LINEAR - MAMBA)
    if unknown:
        raise DerivationError(f"{t.source.file}: {key} holds unknown layer kinds {unknown}")
    return {
        label: sum(1 for n in names if n in group)
        for label, group in (
            ("full", FULL),
            ("sliding", SLIDING),
            ("linear", LINEAR),
            ("mamba", MAMBA),
        )
    }


def _layer_kinds(t: Lookup, facts: Facts, layers: int) -> Kinds:
    """How many layers of each kind (full, sliding, linear, mamba), and the key that says so."""
    found = t.first(["layer_types", "layers_block_type"])
    if found is not None:
        return _from_list(t, found[0], found[1], layers), found[0]
    found = t.first(["hybrid_override_pattern"])
    if found is not None:
        key, pattern = found
        if not isinstance(pattern, str) or len(pattern) != layers:
            raise DerivationError(f"{t.source.file}: {key} must have one letter per layer")
        return {"full": pattern.count("*"), "mamba": pattern.count("M")}, key
    for names, kind in (
        (["full_attention_interval"], "linear"),
        (["sliding_window_pattern", "sliding_window_layer_period"], "sliding"),
    ):
        found = t.first(names)
        if found is not None and (kind != "sliding" or t.data.get("sliding_window")):
            key, n = found
            full = every_nth(layers, t.typed(key, n, int))
            return {"full": full, kind: layers - full}, key
    found = t.first(["attn_layer_period"])
    if found is not None:
        key, period = found
        offset = t.typed("attn_layer_offset", t.data.get("attn_layer_offset", 0), int, least=0)
        full = every_from(layers, t.typed(key, period, int), offset)
        return {"full": full, "mamba": layers - full}, key
    if t.data.get("sliding_window") and t.data.get("use_sliding_window", True):
        facts.notes.append(
            f"{t.source.file} sets sliding_window without saying which layers slide: "
            "every layer is recorded as full attention"
        )
    return {"full": layers}, t.prefix + "num_hidden_layers"


def _kinds(t: Lookup, facts: Facts, layers: int) -> dict[str, int]:
    kinds, key = _layer_kinds(t, facts, layers)
    if kinds.get("full", 0) <= 0:
        raise DerivationError(f"{t.source.file}: {key} names no full-attention layer")
    facts.put(f"{ARCH}.full_attention_layers", kinds["full"], t.source, key)
    if kinds.get("sliding"):
        facts.put(f"{ARCH}.sliding_window_layers", kinds["sliding"], t.source, key)
        t.need(facts, f"{ARCH}.sliding_window", ["sliding_window"])
    return kinds


def _linear(t: Lookup, facts: Facts) -> None:
    base = f"{ARCH}.linear_attention"
    t.need(facts, f"{base}.num_key_heads", ["linear_num_key_heads"])
    t.need(facts, f"{base}.num_value_heads", ["linear_num_value_heads"])
    t.need(facts, f"{base}.key_head_dim", ["linear_key_head_dim"])
    t.need(facts, f"{base}.value_head_dim", ["linear_value_head_dim"])
    t.need(facts, f"{base}.conv_kernel", ["linear_conv_kernel_dim", "linear_conv_kernel"])


def _mamba(t: Lookup, facts: Facts, layers: int, key: str) -> None:
    base = f"{ARCH}.mamba"
    facts.put(f"{base}.layers", layers, t.source, key)
    t.need(facts, f"{base}.num_heads", ["mamba_num_heads", "mamba_n_heads"])
    t.need(facts, f"{base}.head_dim", ["mamba_head_dim", "mamba_d_head"])
    t.need(facts, f"{base}.state_size", ["ssm_state_size", "mamba_d_state", "state_size"])
    t.put(facts, f"{base}.n_groups", ["n_groups", "mamba_n_groups"])
    t.need(facts, f"{base}.conv_kernel", ["conv_kernel", "mamba_d_conv", "mamba_conv_kernel"])


def _moe(t: Lookup, facts: Facts) -> None:
    base = f"{ARCH}.moe"
    experts = t.put(
        facts,
        f"{base}.num_experts",
        ["num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"],
        least=0,
    )
    if experts is None:
        return
    t.need(
        facts,
        f"{base}.experts_per_token",
        [
            "num_experts_per_tok",
            "top_k_experts",
            "experts_per_token",
            "moe_top_k",
            "num_experts_per_token",
        ],
    )
    t.put(facts, f"{base}.moe_intermediate_size", ["moe_intermediate_size"])
    shared_keys = ["n_shared_experts", "num_shared_experts"]
    if t.put(facts, f"{base}.shared_experts", shared_keys, least=0) is None:
        shared = t.first(["shared_expert_intermediate_size"])
        if shared is not None and shared[1]:
            facts.put(f"{base}.shared_experts", 1, t.source, shared[0])


def _dtype(t: Lookup, top: Lookup, facts: Facts) -> None:
    found = t.first(["torch_dtype", "dtype"]) or top.first(["torch_dtype", "dtype"])
    if found is None:
        return
    key, value = found
    if value in ("bfloat16", "float16"):
        facts.put(f"{ARCH}.dtype", value, t.source, key)
    else:
        facts.notes.append(f"{t.source.file}: {key} is {value!r}; the dtype is left at bfloat16")


def architecture_facts(config: dict[str, Any], source: Source) -> Facts:
    """Every architecture fact config.json states, with the key it came from."""
    facts = Facts()
    top = Lookup(config, source)
    t = text_lookup(config, source)
    layers = t.need(facts, f"{ARCH}.num_layers", ["num_hidden_layers", "n_layer", "num_layers"])
    hidden = t.need(facts, f"{ARCH}.hidden_size", ["hidden_size", "d_model", "n_embd"])
    heads = t.need(facts, f"{ARCH}.num_attention_heads", ["num_attention_heads", "n_head"])
    kinds = _kinds(t, facts, layers)
    global_layers = bool(kinds.get("sliding"))
    kv_names = ["num_key_value_heads", "num_kv_heads", "multi_query_group_num"]
    dim_names = ["head_dim", "attention_head_dim", "kv_channels"]
    if global_layers:  # Gemma 4: the full-attention layers (the KV that grows) have their own
        kv_names.insert(0, "num_global_key_value_heads")
        dim_names.insert(0, "global_head_dim")
    if t.put(facts, f"{ARCH}.num_kv_heads", kv_names) is None:
        facts.put(f"{ARCH}.num_kv_heads", heads, source, t.prefix + "num_attention_heads")
    if t.put(facts, f"{ARCH}.head_dim", dim_names) is None:
        derived = f"{t.prefix}hidden_size / {t.prefix}num_attention_heads"
        facts.put(f"{ARCH}.head_dim", hidden // heads, source, derived)
    t.put(facts, f"{ARCH}.intermediate_size", ["intermediate_size", "ffn_hidden_size"])
    if t.put(facts, f"{ARCH}.vocab_size", ["vocab_size", "padded_vocab_size"]) is None:
        top.put(facts, f"{ARCH}.vocab_size", ["vocab_size"])
    t.need(
        facts,
        f"{ARCH}.max_position_embeddings",
        ["max_position_embeddings", "max_sequence_length", "seq_length", "n_positions"],
    )
    if kinds.get("linear"):
        _linear(t, facts)
    if kinds.get("mamba"):
        key = str(facts.provenance[f"{ARCH}.full_attention_layers"]["key"])
        _mamba(t, facts, kinds["mamba"], key)
    _moe(t, facts)
    mtp = ["mtp_num_hidden_layers", "num_nextn_predict_layers"]
    t.put(facts, f"{ARCH}.mtp_layers", mtp, least=0)
    gate = t.first(["attn_output_gate"])
    if gate is not None and gate[1] is True:
        facts.put(f"{ARCH}.attn_output_gate", True, source, gate[0])
    if isinstance(config.get("vision_config"), dict):
        facts.put(f"{ARCH}.vision", True, source, "vision_config")
    tied = top.first(["tie_word_embeddings"]) or t.first(["tie_word_embeddings"])
    if tied is not None and tied[1] is True:
        facts.put(f"{ARCH}.tied_embeddings", True, source, tied[0])
    _dtype(t, top, facts)
    return facts
