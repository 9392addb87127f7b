"""An upstream command line read back into facts: each known flag to its field, the rest listed.

The tables invert the dialects of `render/dialects`: a flag an engine family knows becomes the
fact it expresses (with the tunable variable upstream reads for it, when it reads one); a flag
profilegen does not model is kept verbatim in the profile's escape hatch and reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...registry.safejson import load_json
from .words import Binding, binding, default_value, group_flags

# flag -> (fact path, value kind, the tunable profilegen reads for it)
VLLM: dict[str, tuple[str, str, str | None]] = {
    "--model": ("weights_path", "path", None),
    "--served-model-name": ("serve.served_names", "names", None),
    "--quantization": ("envelope.quantization", "word", None),
    "--dtype": ("envelope.dtype", "word", None),
    "--tensor-parallel-size": ("envelope.tp", "int", "TP"),
    "--pipeline-parallel-size": ("envelope.pp", "int", "PP"),
    "--max-model-len": ("envelope.max_model_len", "int", "MAX_MODEL_LEN"),
    "--gpu-memory-utilization": (
        "envelope.gpu_memory_utilization",
        "float",
        "GPU_MEMORY_UTILIZATION",
    ),
    "--max-num-seqs": ("envelope.max_num_seqs", "int", "MAX_NUM_SEQS"),
    "--kv-cache-memory": ("envelope.kv_cache_memory", "int", "KV_CACHE_MEMORY"),
    "--kv-cache-memory-bytes": ("envelope.kv_cache_memory", "int", "KV_CACHE_MEMORY"),
    "--max-num-batched-tokens": (
        "envelope.max_num_batched_tokens",
        "int",
        "MAX_NUM_BATCHED_TOKENS",
    ),
    "--long-prefill-token-threshold": (
        "envelope.long_prefill_token_threshold",
        "int",
        "LONG_PREFILL_TOKEN_THRESHOLD",
    ),
    "--kv-cache-dtype": ("envelope.kv_cache_dtype", "word", "KV_CACHE_DTYPE"),
    "--mamba-ssm-cache-dtype": ("envelope.mamba_ssm_cache_dtype", "word", "MAMBA_SSM_CACHE_DTYPE"),
    "--attention-backend": ("envelope.attention_backend", "word", "ATTN_BACKEND"),
    "--mamba-cache-mode": ("envelope.mamba_cache_mode", "word", None),
    "--enable-prefix-caching": ("envelope.prefix_caching", "true", None),
    "--no-enable-prefix-caching": ("envelope.prefix_caching", "false", None),
    "--enable-chunked-prefill": ("envelope.chunked_prefill", "true", None),
    "--no-enable-chunked-prefill": ("envelope.chunked_prefill", "false", None),
    "--async-scheduling": ("envelope.async_scheduling", "true", None),
    "--no-async-scheduling": ("envelope.async_scheduling", "false", None),
    "--enforce-eager": ("envelope.enforce_eager", "true", None),
    "--enable-expert-parallel": ("envelope.expert_parallel", "true", None),
    "--disable-custom-all-reduce": ("envelope.custom_all_reduce", "off", None),
    "--compilation-config": ("compilation", "json", None),
    "--limit-mm-per-prompt": ("envelope.limit_mm_per_prompt", "json", None),
    "--trust-remote-code": ("serve.trust_remote_code", "reason", None),
    "--language-model-only": ("serve.language_model_only", "true", None),
    "--chat-template": ("serve.chat_template", "path", None),
    "--reasoning-parser": ("serve.reasoning_parser", "word", None),
    "--enable-auto-tool-choice": ("serve.auto_tool_choice", "true", None),
    "--tool-call-parser": ("serve.tool_call_parser", "word", None),
    "--default-chat-template-kwargs": ("serve.chat_template_kwargs", "json", None),
    "--override-generation-config": ("sampler", "json", None),
    "--speculative-config": ("spec_json", "json", None),
    "--mamba-backend": ("runtime.mamba_backend", "word", None),
    "--enable-mamba-cache-stochastic-rounding": ("runtime.mamba_stochastic_rounding", "true", None),
    "--mamba-cache-philox-rounds": ("runtime.mamba_philox_rounds", "int", None),
    "--generation-config": ("runtime.generation_config", "word", None),
    "--hf-overrides": ("runtime.hf_overrides", "json", None),
    "--kv-transfer-config": ("runtime.kv_transfer", "json", None),
    "--host": ("host", "ignore", None),
    "--port": ("port", "ignore", None),
}
LLAMA: dict[str, tuple[str, str, str | None]] = {
    "-m": ("weights_path", "path", None),
    "--model": ("weights_path", "path", None),
    "--mmproj": ("mmproj_path", "path", None),
    "--alias": ("serve.served_names", "names", None),
    "-c": ("envelope.max_model_len", "int", "CTX_SIZE"),
    "--ctx-size": ("envelope.max_model_len", "int", "CTX_SIZE"),
    "-b": ("envelope.batch_size", "int", "BATCH_SIZE"),
    "--batch-size": ("envelope.batch_size", "int", "BATCH_SIZE"),
    "-ub": ("envelope.ubatch_size", "int", "UBATCH_SIZE"),
    "--ubatch-size": ("envelope.ubatch_size", "int", "UBATCH_SIZE"),
    "-ngl": ("envelope.gpu_layers", "layers", None),
    "--n-gpu-layers": ("envelope.gpu_layers", "layers", None),
    "-sm": ("envelope.split_mode", "word", "SPLIT_MODE"),
    "--split-mode": ("envelope.split_mode", "word", "SPLIT_MODE"),
    "-ts": ("envelope.tensor_split", "floats", "TENSOR_SPLIT"),
    "--tensor-split": ("envelope.tensor_split", "floats", "TENSOR_SPLIT"),
    "-fa": ("envelope.flash_attn", "onoff", None),
    "--flash-attn": ("envelope.flash_attn", "onoff", None),
    "--cache-type-k": ("envelope.kv_cache_dtype", "word", "KV_TYPE"),
    "-ctk": ("envelope.kv_cache_dtype", "word", "KV_TYPE"),
    "--cache-type-v": ("envelope.kv_cache_dtype_v", "word", "KV_TYPE"),
    "-ctv": ("envelope.kv_cache_dtype_v", "word", "KV_TYPE"),
    "-np": ("envelope.max_num_seqs", "int", "NP"),
    "--parallel": ("envelope.max_num_seqs", "int", "NP"),
    "--jinja": ("serve.jinja", "true", None),
    "--reasoning": ("reasoning", "word", "REASONING"),
    "--reasoning-format": ("serve.reasoning_parser", "word", "REASONING_FORMAT"),
    "--reasoning-budget": ("serve.reasoning_budget", "int", None),
    "--chat-template-kwargs": ("serve.chat_template_kwargs", "json", None),
    "--chat-template-file": ("serve.chat_template", "path", None),
    "--temp": ("sampler.temperature", "float", "TEMP"),
    "--top-p": ("sampler.top_p", "float", "TOP_P"),
    "--top-k": ("sampler.top_k", "int", "TOP_K"),
    "--min-p": ("sampler.min_p", "float", "MIN_P"),
    "--presence-penalty": ("sampler.presence_penalty", "float", "PRESENCE_PENALTY"),
    "--repeat-penalty": ("sampler.repetition_penalty", "float", "REPEAT_PENALTY"),
    "--spec-type": ("spec_types", "spec", None),
    "--spec-draft-n-max": ("spec_width", "int", "SPEC_N"),
    "--spec-draft-model": ("draft_path", "path", None),
    "-md": ("draft_path", "path", None),
    "--model-draft": ("draft_path", "path", None),
    "-t": ("runtime.threads", "int", None),
    "--threads": ("runtime.threads", "int", None),
    "-ot": ("runtime.tensor_overrides", "overrides", None),
    "--override-tensor": ("runtime.tensor_overrides", "overrides", None),
    "--no-mmap": ("runtime.mmap", "false", None),
    "--mmap": ("runtime.mmap", "true", None),
    "--no-host": ("runtime.host_buffers", "false", None),
    "--kv-unified": ("runtime.kv_unified", "true", None),
    "--no-kv-unified": ("runtime.kv_unified", "false", None),
    "--cache-prompt": ("runtime.prompt_cache", "true", None),
    "--no-cache-prompt": ("runtime.prompt_cache", "false", None),
    "--cache-ram": ("runtime.prompt_cache_ram_mib", "int", None),
    "--fit": ("runtime.auto_fit", "onoff", None),
    "--fit-margin": ("runtime.auto_fit_margin_mib", "int", None),
    "--main-gpu": ("runtime.main_gpu", "int", None),
    "--max-gpu": ("runtime.max_gpus", "int", None),
    "--context-shift": ("runtime.context_shift", "true", None),
    "--no-context-shift": ("runtime.context_shift", "false", None),
    "--parallel-tool-calls": ("runtime.parallel_tool_calls", "true", None),
    "--image-min-tokens": ("runtime.image_min_tokens", "int", None),
    "--image-max-tokens": ("runtime.image_max_tokens", "int", None),
    "--override-kv": ("runtime.gguf_overrides", "keyvalues", None),
    "-khad": ("runtime.kv_hadamard", "add:k", None),
    "-vhad": ("runtime.kv_hadamard", "add:v", None),
    "--merge-qkv": ("runtime.merge_qkv", "true", None),
    "--recurrent-ckpt-mode": ("runtime.recurrent_checkpoints", "word", None),
    "--moe-cache": ("runtime.moe_cache", "word", None),
    "--repeat-last-n": ("runtime.repeat_last_n", "int", None),
    "--dry-multiplier": ("runtime.dry.multiplier", "float", None),
    "--dry-base": ("runtime.dry.base", "float", None),
    "--dry-allowed-length": ("runtime.dry.allowed_length", "int", None),
    "-ngld": ("drafter.gpu_layers", "layers", None),
    "--n-gpu-layers-draft": ("drafter.gpu_layers", "layers", None),
    "--spec-draft-ngl": ("drafter.gpu_layers", "layers", None),
    "-devd": ("drafter.device", "word", None),
    "--device-draft": ("drafter.device", "word", None),
    "--spec-dflash-cross-ctx": ("drafter.cross_ctx", "int", None),
    "--host": ("host", "ignore", None),
    "--port": ("port", "ignore", None),
}
# Family default spellings of the facts whose flag a build may name otherwise.
LLAMA_SPELLING = {
    "weights_path": ("model", "-m"),
    "envelope.max_model_len": ("max_model_len", "-c"),
    "envelope.batch_size": ("batch_size", "-b"),
    "envelope.ubatch_size": ("ubatch_size", "-ub"),
    "envelope.gpu_layers": ("gpu_layers", "-ngl"),
    "envelope.split_mode": ("split_mode", "-sm"),
    "envelope.tensor_split": ("tensor_split", "-ts"),
    "envelope.flash_attn": ("flash_attn", "-fa"),
    "envelope.kv_cache_dtype": ("cache_type_k", "--cache-type-k"),
    "envelope.kv_cache_dtype_v": ("cache_type_v", "--cache-type-v"),
    "envelope.max_num_seqs": ("max_num_seqs", "-np"),
    "draft_path": ("spec_draft_model", "--spec-draft-model"),
    "runtime.threads": ("threads", "-t"),
    "runtime.tensor_overrides": ("tensor_overrides", "-ot"),
    "drafter.gpu_layers": ("draft_gpu_layers", "-ngld"),
    "drafter.device": ("draft_device", "-devd"),
}
VLLM_SPELLING = {"envelope.kv_cache_memory": ("kv_cache_memory", "--kv-cache-memory")}
# Fact -> the flag the render dialects write unless a build or profile says otherwise.
DEFAULT_SPELLING = dict([*LLAMA_SPELLING.values(), *VLLM_SPELLING.values()])


# `--override-kv KEY=int:${CTX_SIZE:-N}`: the key follows the context tunable.
_CONTEXT_KEY = re.compile(r"^(?P<key>[\w.-]+)=int:\$\{(CTX_SIZE|CTX)(:-\d+)?\}$")


@dataclass
class Facts:
    """What a command line says, as fact paths; what it says that is not modelled; notes."""

    values: dict[str, Any] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)
    spellings: dict[str, str] = field(default_factory=dict)
    tunables: dict[str, Binding] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Fact path -> the words it was read from (to keep them if the fact has no home).
    words: dict[str, list[str]] = field(default_factory=dict)
    # Every flag the command passes that profilegen models (the engine build must list it).
    flags: set[str] = field(default_factory=set)
    # On/off facts passed as a bare flag (the build's `bare_switches`).
    bare: set[str] = field(default_factory=set)
    # Tunable -> the other host variables upstream reads for it; what that changes.
    aliases: dict[str, list[str]] = field(default_factory=dict)
    deviations: list[dict[str, str]] = field(default_factory=list)


# The upstream command lines' flags each family's dialect reads back into facts.
DIALECTS = {"vllm": (VLLM, VLLM_SPELLING), "llama.cpp": (LLAMA, LLAMA_SPELLING)}


def read_flags(words: list[str], family: str) -> Facts:
    table, spell = DIALECTS.get(family, DIALECTS["llama.cpp"])
    facts = Facts()
    for flag, values in group_flags(_expand_flag_words(words, facts)):
        if flag is None or flag not in table:
            _extra(facts, flag, values)
            continue
        if kind_of(table, flag) == "spec":
            facts.values.setdefault("spec_types", []).extend(values)  # raw: may bind SPEC_N
            continue
        path, kind, tunable = table[flag]
        if kind != "ignore":
            facts.flags.add(flag)
        if path in spell:
            facts.spellings[spell[path][0]] = flag
        _take(facts, path, kind, tunable, flag, values)
    return facts


def kind_of(table: dict[str, tuple[str, str, str | None]], flag: str) -> str:
    return table[flag][1]


def _expand_flag_words(words: list[str], facts: Facts) -> list[str]:
    """Words whose default is a flag (`${PREFIX_CACHE_ARG:---enable-prefix-caching}`) become it;
    conditional words (`${THINKING:+--reasoning on}`) are empty by default and are dropped."""
    out = []
    for word in words:
        if word.startswith("${") and ":+" in word.split("}")[0]:
            facts.notes.append(f"conditional words not modelled (empty by default): {word}")
            continue
        b = binding(word)
        if b is not None and b.default.startswith("-"):
            out.append(b.default)
            continue
        out.append(word)
    return out


def _extra(facts: Facts, flag: str | None, values: list[str]) -> None:
    words = ([flag] if flag else []) + [default_value(v) for v in values]
    facts.extra += words
    facts.notes.append("not modelled, kept as extra arguments: " + " ".join(words))


def _take(
    facts: Facts, path: str, kind: str, tunable: str | None, flag: str, values: list[str]
) -> None:
    facts.words.setdefault(path, []).extend([flag, *(default_value(v) for v in values)])
    if flag == "--override-kv" and values and (m := _CONTEXT_KEY.match(values[0])):
        facts.values["runtime.context_length_key"] = m["key"]
        return
    if kind.startswith("add:"):
        facts.values.setdefault(path, []).append(kind[4:])
        return
    if kind in ("true", "false", "off", "reason", "ignore"):
        facts.values[path] = {"true": True, "false": False, "off": "off", "ignore": None}.get(
            kind, "passed by the upstream server the evidence was measured on"
        )
        return
    if not values and kind == "onoff":
        facts.values[path] = True  # a build that takes the bare flag for on
        facts.bare.add(path.rsplit(".", 1)[-1])
        return
    if not values:
        facts.notes.append(f"{flag} has no value; kept as extra arguments")
        facts.extra.append(flag)
        return
    b = binding(values[0]) if len(values) == 1 else None
    if b is not None and tunable is not None:
        facts.tunables[path] = b
        _aliases(facts, path, tunable, flag, b)
    texts = [default_value(v) for v in values]
    try:
        value = _convert(kind, texts)
        old = facts.values.get(path)
        facts.values[path] = (
            {**old, **value} if isinstance(old, dict) and kind == "keyvalues" else value
        )
    except ValueError as exc:
        facts.notes.append(f"{flag} {' '.join(texts)}: {exc}; kept as extra arguments")
        facts.extra += [flag, *texts]


def _aliases(facts: Facts, path: str, tunable: str, flag: str, b: Binding) -> None:
    """The upstream names of a tunable become names ours also reads (K's for a K/V pair)."""
    if path == "envelope.kv_cache_dtype_v":
        return
    known = facts.aliases.setdefault(tunable, [])
    known += [n for n in b.names if n != tunable and n not in known]
    if not known:
        del facts.aliases[tunable]
    if b.names[0] != tunable:
        facts.deviations.append(
            {
                "what": f"{tunable} sets {flag} before {b.names[0]}, which upstream reads alone",
                "reason": "every profile names a setting alike; the upstream name still works",
            }
        )


def _convert(kind: str, texts: list[str]) -> Any:
    convert = CONVERT.get(kind)
    return texts[0] if convert is None else convert(texts)


def _onoff(texts: list[str]) -> bool:
    if texts[0] not in ("on", "off"):
        raise ValueError("not on or off")
    return texts[0] == "on"


def _json_object(texts: list[str]) -> dict[str, Any]:
    value = load_json(texts[0])
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def _overrides(texts: list[str]) -> list[dict[str, str]]:
    rules = [r.rsplit("=", 1) for r in texts[0].split(",")]
    if any(len(r) != 2 for r in rules):
        raise ValueError("not PATTERN=DEVICE,...")
    return [{"pattern": p, "device": d} for p, d in rules]


def _keyvalues(texts: list[str]) -> dict[str, str]:
    pairs = [p.split("=", 1) for p in texts[0].split(",")]
    if any(len(p) != 2 for p in pairs):
        raise ValueError("not KEY=TYPE:VALUE,...")
    return dict(pairs)


CONVERT: dict[str, Callable[[list[str]], Any]] = {
    "names": list,
    "int": lambda texts: int(texts[0]),
    "float": lambda texts: float(texts[0]),
    "layers": lambda texts: "all" if texts[0] == "all" else int(texts[0]),
    "floats": lambda texts: [float(x) for x in texts[0].split(",")],
    "onoff": _onoff,
    "json": _json_object,
    "overrides": _overrides,
    "keyvalues": _keyvalues,
}
