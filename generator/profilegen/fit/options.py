"""What a fit is asked (what-if overrides) and what it answers (the result)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from . import formulas as fm

# Options that are not what-ifs on the envelope.
_NOT_WHAT_IF = {
    "profile",
    "fmt",
    "calibration",
    "leave_one_out",
    "constants",
    "from_log",
    "record",
    "booted_on",
}
# The settings a fit can vary (their canonical path, model/vocabulary.py) -> the option field.
WHAT_IF_SETTINGS = {
    "envelope.tp": "tp",
    "envelope.gpu_memory_utilization": "gpu_util",
    "envelope.kv_cache_dtype": "kv_dtype",
    "envelope.max_model_len": "max_model_len",
    "envelope.max_num_seqs": "max_num_seqs",
    "envelope.max_num_batched_tokens": "max_num_batched_tokens",
    "envelope.kv_cache_memory": "kv_cache_memory",
    "envelope.ubatch_size": "ubatch_size",
    "envelope.prefix_caching": "prefix_caching",
    "envelope.mamba_cache_mode": "mamba_cache_mode",
    "envelope.cudagraph_max_capture": "cudagraph_max_capture",
    "envelope.enforce_eager": "enforce_eager",
    "drafter.width": "spec_n",
}


@dataclass(frozen=True)
class FitOptions:
    """What-if overrides (None keeps the profile's value) and the report format."""

    profile: str | None = None
    rig: str | None = None
    engine: str | None = None
    tp: int | None = None
    gpu_util: float | None = None
    kv_dtype: str | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    spec_n: int | None = None
    kv_cache_memory: int | None = None
    weights: str | None = None
    # The weights' size in bytes, in place of the artifact's (a boot of another file of the
    # same model: the tensor data llama-server logs as its "file size").
    weights_bytes: int | None = None
    # Where llama.cpp's graph runs (a CPU-only build's boot log): cuda or cpu.
    backend: str | None = None
    # False: the profile's vision projector is not loaded (a boot without it).
    mmproj: bool | None = None
    ubatch_size: int | None = None  # llama.cpp's physical batch (-ub)
    prefix_caching: bool | None = None
    mamba_cache_mode: str | None = None
    cudagraph_max_capture: int | None = None
    enforce_eager: bool | None = None
    # MiB a display holds on the rig's first card (its compositor), in place of the rig's
    # own reservation; 0: none.
    reserve_mib: int | None = None
    # The day a measured boot ran (a record's date), where fit predicts that boot.
    booted_on: str | None = None
    fmt: str = "text"
    calibration: bool = False
    leave_one_out: bool = False
    from_log: str | None = None
    record: bool = False
    constants: fm.Constants = fm.DEFAULT_CONSTANTS

    def what_ifs(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in _NOT_WHAT_IF and getattr(self, f.name) is not None
        }


@dataclass(frozen=True)
class Unmodelled:
    """A term a prediction leaves out."""

    term: str  # a few words: what `fit calibration` shows beside a record that is off
    why: str  # the sentence `fit` prints


@dataclass(frozen=True)
class FitResult:
    profile: str
    engine: str
    rig: str
    gpu: str
    tp: int
    gpus: int
    weights: str
    weights_bytes: int
    kv_cache_dtype: str
    gpu_memory_utilization: float | None
    spec_n: int
    max_model_len: int
    max_num_seqs: int
    kv_pool_tokens: int
    kv_pool_bytes_per_gpu: int
    kv_bytes_per_token_per_gpu: int
    kv_cache_bytes: int  # KV bytes summed over every GPU
    max_concurrency: float
    boots: bool
    fits: bool
    within_policy: bool
    # vLLM: pool minus max_model_len x max_num_seqs; llama.cpp: context the tightest GPU
    # could still add. Negative is a shortfall.
    headroom_tokens: int
    free_bytes: int  # physical slack of the tightest GPU
    budget: dict[str, int]  # the tightest GPU
    budgets: list[dict[str, int]] = field(default_factory=list)  # every GPU used
    tp_capped_from: int | None = None
    notes: list[str] = field(default_factory=list)
    engine_id: str = ""  # the registry engine fitted (the profile's, or --engine)
    engine_version: str | None = None
    accounting: str | None = None  # vLLM non-KV accounting of that release
    kv_available_bytes: int | None = None  # vLLM "Available KV cache memory", per GPU
    capture_sizes: int | None = None  # vLLM V1 CUDA-graph capture sizes
    used_bytes: int = 0  # resident GPU memory summed over the cards (nvidia-smi's view)
    host_weights_bytes: int = 0  # llama.cpp: weights kept in host memory
    cards: list[str] = field(default_factory=list)  # the GPU of every card of the rig
    # Terms the prediction leaves out, named (the pool is high by each of them).
    unmodelled: list[Unmodelled] = field(default_factory=list)
    # Why the container refuses to boot at these settings (then `fits` is False).
    refused: list[str] = field(default_factory=list)
    # vLLM: what sized the pool (the release's own get_kv_cache_configs, or the hand
    # formulas and why); None for the other engines.
    pool_by: str | None = None
    # When it does not fit: the largest context (at its sequences) and the most sequences
    # (at its context) that would, or why none does (fit/whatfits.py); None when not asked.
    would_fit: dict[str, int | str | None] | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)
