"""Writes a tiny Qwen3 model (random weights) with a tokenizer trained here, offline.

Run by the vLLM environment's Python (it has torch, transformers, tokenizers):
`python tinyqwen_make.py OUT KIND`, KIND being `qwen3-next` (Qwen3NextForCausalLM: a
gated-delta-net layer and a full-attention layer, routed experts: the hybrid kind of the
Qwen3.5/3.6 models) or `qwen3` (Qwen3ForCausalLM, two full-attention layers). Everything is made from fixed seeds and the text below, so a
folder written from the same script is the same model. The chat template is the tests' own:
ChatML turns, tools listed in the system turn and called as `<tool_call>` blocks of
`<function=NAME>` and `<parameter=NAME>` (what vLLM's qwen3_coder tool parser reads), tool
answers as `<tool_response>`, and a thinking switch (`enable_thinking`, on unless set false:
off writes an empty `<think></think>` block into the prompt, as Qwen3's templates do).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# The hybrid's layers: a gated-delta-net (linear attention, a recurrent state) layer and a
# full-attention layer; the dense model has as many layers, all full attention.
LAYER_TYPES = ("linear_attention", "full_attention")
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, EXPERTS = 128, 2, 1, 64, 256, 4
CONTEXT = 262144
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Added tokens the parsers look up by name (kept in the text they are part of).
MARKUP = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>",
          "</tool_response>"]  # fmt: skip
VOCAB = 1024  # the tokenizer's size, its added and reserved tokens included

TEMPLATE = """\
{%- set thinking = enable_thinking is not defined or enable_thinking -%}
{%- if tools -%}
<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}Tools you may call:
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools>
Call one as <tool_call>
<function=NAME>
<parameter=NAME>
VALUE
</parameter>
</function>
</tool_call><|im_end|>
{% elif messages[0].role == 'system' -%}
<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif -%}
{%- for m in messages if m.role != 'system' -%}
{%- if m.role == 'tool' -%}
<|im_start|>user
<tool_response>
{{ m.content }}
</tool_response><|im_end|>
{% else -%}
<|im_start|>{{ m.role }}
{{ m.content if m.content is string else '' }}
{%- for call in m.tool_calls or [] %}
<tool_call>
<function={{ call.function.name }}>
{% for name, value in (call.function.arguments if call.function.arguments is mapping else {}).items() -%}
<parameter={{ name }}>
{{ value }}
</parameter>
{% endfor -%}
</function>
</tool_call>
{%- endfor %}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% if not thinking %}<think>

</think>

{% endif -%}
{%- endif -%}
"""

_TEXT = (
    "the a an of to and in is it that for on with as was at by be this from or have not are "
    "hello world say answer question weather city paris london tokyo berlin rome madrid "
    "think thinking reason step first then next finally because so therefore result value "
    "function parameter call tool name type string number object array true false null "
    "def return class import if else for while print json yaml model serve engine token "
    "one two three four five six seven eight nine ten zero hundred thousand"
)
WORDS = _TEXT.split(" ")


def corpus() -> list[str]:
    """Deterministic text: word runs, numbers, JSON, code and the template's markup."""
    lines = []
    for i in range(600):
        words = [WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(12)]
        lines.append(" ".join(words).capitalize() + ".")
        lines.append(json.dumps({"name": words[0], "arguments": {words[1]: words[2], "n": i}}))
        lines.append(f"def {words[3]}_{i}({words[4]}):\n    return {words[5]} + {i}")
    lines.append(TEMPLATE)
    return lines


def tokenizer(out: Path) -> int:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - len(SPECIAL) - len(MARKUP) - 16,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer)
    from tokenizers import AddedToken

    tok.add_tokens([AddedToken(t, normalized=False, special=False) for t in MARKUP])
    # Reserved tokens up to VOCAB: a vocabulary of a round size, each row of the embedding a
    # token (vLLM's structured-output masks are laid out for the model's vocabulary).
    reserved = VOCAB - tok.get_vocab_size()
    tok.add_special_tokens([f"<|reserved_{i}|>" for i in range(reserved)])
    tok.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": CONTEXT,
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "add_bos_token": False,
        "chat_template": TEMPLATE,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1))
    (out / "special_tokens_map.json").write_text(
        json.dumps({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}, indent=1)
    )
    size: int = tok.get_vocab_size()
    return size


def _hybrid(vocab: int, eos: int, pad: int) -> Any:
    from transformers import Qwen3NextConfig, Qwen3NextForCausalLM

    config = Qwen3NextConfig(
        vocab_size=vocab,
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=len(LAYER_TYPES),
        layer_types=list(LAYER_TYPES),
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HEAD_DIM,
        linear_num_key_heads=1,
        linear_num_value_heads=2,
        linear_key_head_dim=HEAD_DIM,
        linear_value_head_dim=HEAD_DIM,
        linear_conv_kernel_dim=4,
        num_experts=EXPERTS,
        num_experts_per_tok=2,
        moe_intermediate_size=FFN // 4,
        shared_expert_intermediate_size=FFN // 4,
        max_position_embeddings=CONTEXT,
        tie_word_embeddings=True,
        bos_token_id=pad,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    return Qwen3NextForCausalLM(config)


def _dense(vocab: int, eos: int, pad: int) -> Any:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=vocab,
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=len(LAYER_TYPES),
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HEAD_DIM,
        max_position_embeddings=CONTEXT,
        rope_theta=1000000.0,
        tie_word_embeddings=True,
        bos_token_id=pad,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    return Qwen3ForCausalLM(config)


KINDS = {"qwen3-next": _hybrid, "qwen3": _dense}


def model(out: Path, kind: str, vocab: int, eos: int, pad: int) -> None:
    """The model, by transformers' own classes (so the tensors are named and shaped as a
    checkpoint of the architecture is): initialised from a fixed seed, saved in bf16."""
    import torch

    torch.manual_seed(3090)
    KINDS[kind](vocab, eos, pad).to(torch.bfloat16).save_pretrained(out)
    generation = {"eos_token_id": [eos], "pad_token_id": pad, "temperature": 0.6, "top_p": 0.95}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=1))


def main(out: Path, kind: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    size = tokenizer(out)
    vocab = json.loads((out / "tokenizer.json").read_text())
    ids = {t["content"]: t["id"] for t in vocab["added_tokens"]}
    # Every row of the embedding is a token the tokenizer can write out.
    model(out, kind, size, ids["<|im_end|>"], ids["<|endoftext|>"])


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
