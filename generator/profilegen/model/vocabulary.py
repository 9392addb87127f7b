"""One spelling per envelope setting: its registry path, and the aliases commands also take.

The canonical name of a setting is where the registry keeps it (`envelope.kv_cache_dtype`);
`fit --set`, `new --set` and `explain -e` all take it. The other spellings a command knew it
by stay as declared aliases: fit's what-if option (`--kv-dtype`) and the variables engines
read it from (`KV_CACHE_DTYPE` on vLLM, `KV_TYPE` on llama.cpp). Every field of the envelope
is a setting, so the table cannot fall behind the model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from .engine import Engine
from .profile import DrafterUse, Envelope

DRAFT_WIDTH = "drafter.width"


@dataclass(frozen=True)
class Setting:
    """A setting's canonical path and its declared aliases."""

    path: str
    # fit's what-if option (`kv-dtype` for `--kv-dtype`).
    option: str | None = None
    # The variables the registry's engines read the setting from.
    env: tuple[str, ...] = ()
    # Other profile fields a tunable may read for it (llama.cpp's context flag).
    reads: tuple[str, ...] = ()

    @property
    def aliases(self) -> tuple[str, ...]:
        return ((f"--{self.option}",) if self.option else ()) + self.env

    @property
    def fields(self) -> tuple[str, ...]:
        """The profile fields (`envelope.max_model_len`) a tunable of this setting reads."""
        return (self.path, *self.reads)

    def parse(self, raw: str) -> Any:
        """`raw` as the registry field holds it; ValueError names what it must be."""
        try:
            return _adapter(self.path).validate_strings(raw)
        except ValidationError as exc:
            message = exc.errors()[0]["msg"]
            raise ValueError(message[:1].lower() + message[1:]) from None


# Aliases, by envelope field; every other field is a setting known by its path alone.
_ALIASES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "tp": ("tp", ("TP",)),
    "pp": (None, ("PP",)),
    "max_model_len": ("max-model-len", ("MAX_MODEL_LEN", "CTX_SIZE", "CONTEXT_LENGTH")),
    "max_num_seqs": ("max-num-seqs", ("MAX_NUM_SEQS", "NP", "MAX_RUNNING_REQUESTS")),
    "kv_cache_dtype": ("kv-dtype", ("KV_CACHE_DTYPE", "KV_TYPE")),
    "gpu_memory_utilization": ("gpu-util", ("GPU_MEMORY_UTILIZATION",)),
    "kv_cache_memory": ("kv-cache-memory", ("KV_CACHE_MEMORY",)),
    "max_num_batched_tokens": ("max-num-batched-tokens", ("MAX_NUM_BATCHED_TOKENS",)),
    "long_prefill_token_threshold": (None, ("LONG_PREFILL_TOKEN_THRESHOLD",)),
    "mamba_ssm_cache_dtype": (None, ("MAMBA_SSM_CACHE_DTYPE",)),
    "attention_backend": (None, ("ATTN_BACKEND",)),
    "cudagraph_max_capture": (None, ("CG_MAX",)),
    "cudagraph_mem_mib": (None, ("VLLM_V2_CUDAGRAPH_MEM_MIB",)),
    "batch_size": (None, ("BATCH_SIZE",)),
    "ubatch_size": (None, ("UBATCH_SIZE",)),
    "split_mode": (None, ("SPLIT_MODE",)),
    "tensor_split": (None, ("TENSOR_SPLIT",)),
    "quantization": (None, ("QUANTIZATION",)),
}
# Profile properties a tunable may read in place of the field (`context_flag` is the context
# the command passes: max_model_len, unless the engine sizes it itself).
_READS = {"max_model_len": ("envelope.context_flag",)}


def _envelope_setting(name: str) -> Setting:
    option, env = _ALIASES.get(name, (None, ()))
    return Setting(f"envelope.{name}", option, env, _READS.get(name, ()))


SETTINGS: tuple[Setting, ...] = (
    *(_envelope_setting(name) for name in Envelope.model_fields),
    Setting(DRAFT_WIDTH, "spec-n", ("SPEC_N",)),
)
_BY_PATH = {s.path: s for s in SETTINGS}
# Every spelling, canonical or alias, of every setting.
_SPELLINGS = {
    **{a.lstrip("-"): s for s in SETTINGS for a in s.aliases},
    **_BY_PATH,
}


def find_setting(name: str) -> Setting | None:
    """The setting `name` spells: its path, fit's option (with or without `--`) or a variable."""
    key = name.strip()
    return _SPELLINGS.get(key[2:] if key.startswith("--") else key)


def spellings() -> list[str]:
    """Every name a setting goes by, canonical or alias (for a did-you-mean)."""
    return sorted(_SPELLINGS)


def setting(path: str) -> Setting:
    """The setting at a canonical `path` (a KeyError is a bug in the caller)."""
    return _BY_PATH[path]


def engine_variables(engine: Engine, found: Setting) -> list[str]:
    """The variables `engine` reads `found` from (its tunables whose field is the setting)."""
    fields = {f"profile.{f}" for f in found.fields}
    return [t.env for t in engine.tunables if t.field in fields]


@functools.cache
def _adapter(path: str) -> TypeAdapter[Any]:
    section, name = path.split(".", 1)
    info: FieldInfo = (DrafterUse if section == "drafter" else Envelope).model_fields[name]
    return TypeAdapter(info.rebuild_annotation())


def aliases_help(paths: tuple[str, ...] | None = None) -> str:
    """One line per setting that has aliases: `envelope.tp (--tp, TP)`, for a command's help."""
    chosen = [setting(p) for p in paths] if paths is not None else SETTINGS
    return "\n".join(f"  {s.path} ({', '.join(s.aliases)})" for s in chosen if s.aliases)
