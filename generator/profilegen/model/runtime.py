"""Engine runtime facts beyond the hardware envelope: threads, mapping, caches, fork features.

Some fields belong to one engine family (its `runtime_options`); `check` refuses a fact the
profile's engine does not have and a flag its engine build does not list.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from ..families import family, kinds
from .common import PositiveInt, Strict

Word = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.+:-]{1,64}$")]
JsonScalar = bool | int | float | Annotated[str, StringConstraints(pattern=r"^[^\x00-\x1f]*$")]
JsonKey = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
JsonValue = JsonScalar | list[JsonScalar] | dict[str, JsonScalar] | None
MiB = Annotated[int, Field(ge=0)]


class TensorOverride(Strict):
    """Tensors whose name matches `pattern` (a regex) live on `device` (llama.cpp -ot)."""

    pattern: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\\|()\[\]+*?^$-]{1,200}$")]
    device: Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$")]


class Dry(Strict):
    """llama.cpp's DRY repetition sampler."""

    multiplier: Annotated[float, Field(ge=0)]
    base: Annotated[float, Field(gt=0)] | None = None
    allowed_length: Annotated[int, Field(ge=0)] | None = None


class LMCacheServer(Strict):
    """LMCache's multi-process server, started in the container before vLLM: the peer of the
    LMCacheMPConnector in `kv_transfer`. L1 is host RAM; L2, off by default, a disk folder."""

    # Tokens per cached chunk: a multiple of vLLM's KV block (1584 for int8 per-token-head KV).
    chunk_size: PositiveInt
    l1_size_gb: PositiveInt
    eviction_policy: Word = "LRU"
    l2: bool = False
    l2_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_.@+/-]*$")] = "/lmcache-kv"
    # Seconds the entrypoint gives the server before vLLM connects.
    startup_wait_s: Annotated[int, Field(ge=0, le=120)] = 6


class Runtime(Strict):
    """How the engine runs beyond memory sizing; unset fields pass no flag."""

    # llama.cpp and its forks ------------------------------------------------------------
    threads: PositiveInt | None = None
    tensor_overrides: list[TensorOverride] = Field(default_factory=list)
    # False: read the weights into memory instead of mapping the file (--no-mmap).
    mmap: bool | None = None
    # False: no pinned host staging buffers (--no-host).
    host_buffers: bool | None = None
    # One KV buffer shared by all slots (--kv-unified).
    kv_unified: bool | None = None
    prompt_cache: bool | None = None
    # Host RAM for cached prompts between requests (--cache-ram, MiB; 0 turns it off).
    prompt_cache_ram_mib: Annotated[int, Field(ge=-1)] | None = None
    # llama.cpp's automatic fit of context and layers to free memory (--fit, --fit-margin).
    auto_fit: bool | None = None
    auto_fit_margin_mib: MiB | None = None
    main_gpu: Annotated[int, Field(ge=0)] | None = None
    max_gpus: PositiveInt | None = None
    context_shift: bool | None = None
    parallel_tool_calls: bool = False
    image_min_tokens: PositiveInt | None = None
    image_max_tokens: PositiveInt | None = None
    # GGUF metadata overrides (--override-kv KEY=TYPE:VALUE), e.g. {gemma4.context_length: int:262144}.
    gguf_overrides: dict[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,128}$")],
        Annotated[str, StringConstraints(pattern=r"^(int|float|bool|str):[A-Za-z0-9_.+-]{1,64}$")],
    ] = Field(default_factory=dict)
    # A GGUF metadata key set to the served context (`--override-kv KEY=int:<ctx>`): lifts
    # the trained maximum the file records, and follows CTX_SIZE.
    context_length_key: (
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,128}$")] | None
    ) = None
    # ik_llama.cpp: Hadamard-rotated K and/or V cache, merged QKV projections.
    kv_hadamard: list[Literal["k", "v"]] = Field(default_factory=list)
    merge_qkv: bool = False
    recurrent_checkpoints: Word | None = None
    # The MoE-caching fork: experts cached on the host (--moe-cache).
    moe_cache: Word | None = None
    repeat_last_n: Annotated[int, Field(ge=-1)] | None = None
    dry: Dry | None = None
    # vLLM ------------------------------------------------------------------------------
    mamba_backend: Word | None = None
    mamba_stochastic_rounding: bool = False
    mamba_philox_rounds: PositiveInt | None = None
    # Where generation defaults come from (--generation-config auto|vllm|FOLDER).
    generation_config: Word | None = None
    hf_overrides: dict[JsonKey, JsonValue] = Field(default_factory=dict)
    # KV transfer connector (--kv-transfer-config), e.g. LMCache.
    kv_transfer: dict[JsonKey, JsonValue] = Field(default_factory=dict)
    lmcache: LMCacheServer | None = None


def option_family(name: str) -> str | None:
    """The engine kind whose family alone reads runtime field `name` (None: every family)."""
    return next((kind for kind in kinds() if name in family(kind).runtime_options), None)
