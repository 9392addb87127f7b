"""The derivations alone (pure): GGUF metadata of hybrid families, and the other layer forms."""

from __future__ import annotations

from typing import Any

import pytest

from profilegen.authoring.facts import DerivationError, Source
from profilegen.authoring.ggufmeta import gguf_facts, quantization_name
from profilegen.authoring.hfconfig import architecture_facts
from profilegen.model.model import Architecture
from tests.support import checkpoints as ck

SOURCE = Source("gguf", "lab/x", "0" * 40, "x.gguf")
CONFIG = Source("config", "lab/x", "0" * 40, "config.json")


def arch(values: dict[str, Any]) -> Architecture:
    tree: dict[str, Any] = {}
    for path, value in values.items():
        if not path.startswith("architecture."):
            continue
        node = tree
        parts = path.split(".")[1:]
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return Architecture.model_validate(tree)


def gguf(arch_name: str, **keys: Any) -> dict[str, Any]:
    base = {
        "general.architecture": arch_name,
        f"{arch_name}.block_count": 8,
        f"{arch_name}.context_length": 262144,
        f"{arch_name}.embedding_length": 2048,
        f"{arch_name}.feed_forward_length": 6144,
        f"{arch_name}.attention.head_count": 16,
        f"{arch_name}.attention.head_count_kv": 2,
        f"{arch_name}.attention.key_length": 256,
        "tokenizer.ggml.tokens": 151936,
    }
    return {**base, **{k.replace("__", "."): v for k, v in keys.items()}}


def test_qwen_next_gguf_linear_attention_from_the_ssm_keys() -> None:
    meta = gguf(
        "qwen3next",
        qwen3next__full_attention_interval=4,
        qwen3next__ssm__conv_kernel=4,
        qwen3next__ssm__state_size=128,
        qwen3next__ssm__group_count=16,
        qwen3next__ssm__time_step_rank=32,
        qwen3next__ssm__inner_size=4096,
        qwen3next__expert_count=512,
        qwen3next__expert_used_count=10,
    )
    a = arch(gguf_facts(meta, SOURCE).values)
    assert (a.num_layers, a.full_attention_layers, a.vocab_size) == (8, 2, 151936)
    assert a.linear_attention is not None
    assert a.linear_attention.model_dump() == {
        "num_key_heads": 16,
        "num_value_heads": 32,
        "key_head_dim": 128,
        "value_head_dim": 128,
        "conv_kernel": 4,
        "state_dtype": "float32",  # the default: vLLM keeps recurrent state in fp32
    }
    assert a.moe is not None and (a.moe.num_experts, a.moe.experts_per_token) == (512, 10)


def test_nemotron_h_gguf_counts_mamba_layers_from_per_layer_arrays() -> None:
    # M - M * M - M *: attention where KV heads are set, MLP where only feed-forward is.
    kv = [0, 0, 0, 2, 0, 0, 0, 2]
    ff = [0, 1856, 0, 0, 0, 1856, 0, 0]
    meta = gguf(
        "nemotron_h",
        nemotron_h__attention__head_count_kv=kv,
        nemotron_h__feed_forward_length=ff,
        nemotron_h__ssm__conv_kernel=4,
        nemotron_h__ssm__state_size=128,
        nemotron_h__ssm__group_count=8,
        nemotron_h__ssm__time_step_rank=64,
        nemotron_h__ssm__inner_size=4096,
    )
    facts = gguf_facts(meta, SOURCE)
    a = arch(facts.values)
    assert (a.full_attention_layers, a.num_kv_heads, a.intermediate_size) == (2, 2, 1856)
    assert a.mamba is not None
    assert (a.mamba.layers, a.mamba.num_heads, a.mamba.head_dim, a.mamba.n_groups) == (4, 64, 64, 8)
    assert facts.provenance["architecture.full_attention_layers"] == {
        "source": "gguf",
        "key": "nemotron_h.attention.head_count_kv",
    }


def test_gemma3_gguf_without_a_pattern_key_uses_llama_cpps_pattern() -> None:
    meta = gguf("gemma3", gemma3__attention__sliding_window=1024, gemma3__block_count=12)
    facts = gguf_facts(meta, SOURCE)
    a = arch(facts.values)
    assert (a.full_attention_layers, a.sliding_window_layers, a.sliding_window) == (2, 10, 1024)
    assert facts.provenance["architecture.sliding_window_layers"]["key"] == "general.architecture"


def test_gguf_quantization_name_and_missing_architecture() -> None:
    assert quantization_name({"general.file_type": 15}, {}) == ("Q4_K_M", "general.file_type")
    assert quantization_name({}, {"Q8_0": 200, "F32": 60}) == ("Q8_0", "tensor types")
    with pytest.raises(DerivationError, match=r"^x.gguf has no general.architecture$"):
        gguf_facts({"llama.block_count": 2}, SOURCE)


def test_config_layer_forms_other_than_a_list() -> None:
    gemma3 = {
        **ck.DENSE,
        "num_hidden_layers": 12,
        "sliding_window": 512,
        "sliding_window_pattern": 6,
    }
    a = arch(architecture_facts(gemma3, CONFIG).values)
    assert (a.full_attention_layers, a.sliding_window_layers) == (2, 10)
    jamba = {
        **ck.DENSE,
        "num_hidden_layers": 8,
        "attn_layer_period": 8,
        "attn_layer_offset": 4,
        "mamba_n_heads": 32,
        "mamba_d_head": 64,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
    }
    a = arch(architecture_facts(jamba, CONFIG).values)
    assert a.full_attention_layers == 1 and a.mamba is not None and a.mamba.layers == 7
    # A window without a layer pattern (Qwen2 ships one, switched off) is not a hybrid.
    facts = architecture_facts({**ck.DENSE, "sliding_window": 4096}, CONFIG)
    assert arch(facts.values).full_attention_layers == 32
    assert facts.notes == [
        "config.json sets sliding_window without saying which layers slide: every layer is "
        "recorded as full attention"
    ]


def test_config_errors_name_the_key() -> None:
    bad = {
        **ck.QWEN_HYBRID,
        "text_config": {**ck.QWEN_HYBRID["text_config"], "layer_types": ["x"] * 16},
    }
    with pytest.raises(
        DerivationError, match=r"text_config.layer_types holds unknown layer kinds \['x'\]"
    ):
        architecture_facts(bad, CONFIG)
    with pytest.raises(
        DerivationError, match=r"config.json: hidden_size is '4096', expected an integer"
    ):
        architecture_facts({**ck.DENSE, "hidden_size": "4096"}, CONFIG)
    no_mamba_heads = {k: v for k, v in ck.MAMBA_HYBRID.items() if k != "mamba_num_heads"}
    with pytest.raises(DerivationError, match=r"has no mamba_num_heads \(nor mamba_n_heads\)"):
        architecture_facts(no_mamba_heads, CONFIG)


def test_tied_embeddings_come_from_the_config() -> None:
    tied = architecture_facts({**ck.DENSE, "tie_word_embeddings": True}, CONFIG)
    assert arch(tied.values).tied_embeddings
    assert tied.provenance["architecture.tied_embeddings"]["key"] == "tie_word_embeddings"
    untied = architecture_facts({**ck.DENSE, "tie_word_embeddings": False}, CONFIG)
    assert not arch(untied.values).tied_embeddings
    assert "architecture.tied_embeddings" not in untied.values
