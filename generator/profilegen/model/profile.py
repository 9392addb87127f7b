"""A serving profile: model + engine + drafter + patches + hardware envelope, and evidence."""

from __future__ import annotations

import datetime
import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from .common import EnvName, Fraction, Id, PositiveInt, Status, Strict, Text

Word = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.+:-]{1,64}$")]
ContainerPath = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_.@+/-]*$")]
HostPath = Annotated[str, StringConstraints(pattern=r"^(~|\.|/)[A-Za-z0-9_.@+/-]*$")]
Scalar = bool | int | float | Text


def _calendar_date(value: str) -> str:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value} is not a calendar date (YYYY-MM-DD)") from None
    return value


def _ip_address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 address") from None
    return value


IsoDate = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
    AfterValidator(_calendar_date),
]
IpAddress = Annotated[
    str, StringConstraints(pattern=r"^[0-9a-fA-F.:]+$"), AfterValidator(_ip_address)
]


class Envelope(Strict):
    """The hardware envelope; each engine uses the fields it understands."""

    tp: PositiveInt
    max_model_len: PositiveInt
    max_num_seqs: PositiveInt = 1
    kv_cache_dtype: Word
    gpu_memory_utilization: Fraction | None = None
    # Pins vLLM's KV pool in bytes instead of deriving it from the utilization.
    kv_cache_memory: PositiveInt | None = None
    max_num_batched_tokens: PositiveInt | None = None
    long_prefill_token_threshold: PositiveInt | None = None
    mamba_ssm_cache_dtype: Word | None = None
    mamba_cache_mode: Word | None = None
    attention_backend: Word | None = None
    cudagraph_max_capture: PositiveInt | None = None
    cudagraph_mem_mib: PositiveInt | None = None
    custom_ops: list[Word] = Field(default_factory=list)
    dtype: Literal["bfloat16", "float16", "auto"] = "bfloat16"
    # How the engine loads the weights (SGLang `--quantization auto-round`); unset: the checkpoint
    # config decides.
    quantization: Word | None = None
    prefix_caching: bool = True
    chunked_prefill: bool = True
    async_scheduling: bool = True
    # llama.cpp: batch sizes, offload and how layers split over cards.
    batch_size: PositiveInt | None = None
    ubatch_size: PositiveInt | None = None
    gpu_layers: Annotated[int, Field(ge=0)] | None = None
    split_mode: Literal["none", "layer", "row"] | None = None
    tensor_split: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    flash_attn: bool | None = None


class Sampler(Strict):
    temperature: Annotated[float, Field(ge=0)]
    top_p: Annotated[float, Field(gt=0, le=1)]
    top_k: Annotated[int, Field(ge=-1)]
    min_p: Annotated[float, Field(ge=0, le=1)] = 0.0
    presence_penalty: Annotated[float, Field(ge=-2, le=2)] = 0.0
    repetition_penalty: Annotated[float, Field(gt=0)] | None = None


class Serve(Strict):
    reasoning_parser: Word | None = None
    tool_call_parser: Word | None = None
    auto_tool_choice: bool = False
    # Keys become JSON keys of --default-chat-template-kwargs.
    chat_template_kwargs: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]*$")], Scalar
    ] = Field(default_factory=dict)
    sampler: Sampler | None = None
    language_model_only: bool = False
    served_name: (
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")] | None
    ) = None
    # Engine flags not modelled above, in order; each must be a flag the engine knows.
    extra_args: list[Text] = Field(default_factory=list)


class DrafterUse(Strict):
    id: Id
    width: Annotated[int, Field(ge=0)]


class Mount(Strict):
    """A host path mounted into the container; host_env lets a rig owner move it."""

    host: HostPath
    container: ContainerPath
    host_env: EnvName | None = None
    readonly: bool = True
    help: Text | None = None


class ProfileTunable(Strict):
    # Defaults land inside `${VAR:-default}`: only characters Compose reads literally.
    default: (
        bool | int | float | Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:/@+,~-]*$")]
    )
    type: Literal["int", "float", "bool", "word", "path", "text"]
    help: Text


class PrefillPoint(Strict):
    context_tokens: PositiveInt
    tokens_per_s: Annotated[float, Field(gt=0)]


class QualityScore(Strict):
    suite: Text
    setting: Text
    pass_at_1: Annotated[int, Field(ge=0)]
    pass_at_3: Annotated[int, Field(ge=0)] | None = None
    total: PositiveInt


class Measured(Strict):
    decode_tps_narrative: Annotated[float, Field(gt=0)] | None = None
    decode_tps_code: Annotated[float, Field(gt=0)] | None = None
    ttft_ms: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    prefill: list[PrefillPoint] = Field(default_factory=list)
    peak_vram_mib: PositiveInt | None = None
    # What the engine logs at start-up: vLLM "GPU KV cache size: N tokens".
    kv_pool_tokens: PositiveInt | None = None
    # llama.cpp: the KV buffer it allocates, in bytes.
    kv_buffer_bytes: PositiveInt | None = None
    max_context_filled: PositiveInt | None = None
    verify_full: Annotated[str, StringConstraints(pattern=r"^[0-9]+/[0-9]+$")] | None = None
    verify_stress: Annotated[str, StringConstraints(pattern=r"^[0-9]+/[0-9]+$")] | None = None
    soak: Literal["pass", "fail"] | None = None
    acceptance_length: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    quality: list[QualityScore] = Field(default_factory=list)
    boots: bool | None = None
    oom: bool | None = None


class EvidenceSettings(Strict):
    """What differed from the profile's envelope when this was measured."""

    gpu_memory_utilization: Fraction | None = None
    kv_cache_dtype: Word | None = None
    max_model_len: PositiveInt | None = None
    max_num_seqs: PositiveInt | None = None
    spec_n: Annotated[int, Field(ge=0)] | None = None
    kv_cache_memory: PositiveInt | None = None
    tp: PositiveInt | None = None


class Evidence(Strict):
    date: IsoDate
    rig: Id
    source: Text
    summary: Text | None = None
    settings: EvidenceSettings = EvidenceSettings()
    measured: Measured
    # Fit calibration compares against this record unless it is marked out.
    calibration: bool = True


class Profile(Strict):
    id: Id
    # Abstract profiles only carry shared values for others to extend.
    abstract: bool = False
    extends: Id | None = None
    upstream_key: (
        Annotated[str, StringConstraints(pattern=r"^[a-z.]+/[a-z0-9][a-z0-9._-]*$")] | None
    ) = None
    title: Text
    status: Status
    model: Id
    weights: Id
    mmproj: Id | None = None
    engine: Id
    rig: Id
    drafter: DrafterUse | None = None
    patches: list[Id] = Field(default_factory=list)
    port: Annotated[int, Field(ge=1024, le=65535)]
    bind_host: IpAddress = "0.0.0.0"
    nvlink_mode: Literal["auto", "force_off", "force_on"] = "auto"
    envelope: Envelope
    serve: Serve = Serve()
    # On/off defaults for switchable patches (e.g. W4A8), overriding the patch's own.
    switches: dict[EnvName, bool] = Field(default_factory=dict)
    tunables: dict[EnvName, ProfileTunable] = Field(default_factory=dict)
    env: dict[EnvName, Text] = Field(default_factory=dict)
    # Keyed so that a profile can override or add one mount of the profile it extends.
    mounts: dict[Id, Mount] = Field(default_factory=dict)
    # Group id the container runs with (`user: 0:<gid>`), when the profile needs one.
    user_gid: Annotated[int, Field(ge=0)] | None = None
    # Environment variables passed through from the host unchanged (no default).
    passthrough: list[EnvName] = Field(default_factory=list)
    shm_size: Annotated[str, StringConstraints(pattern=r"^[0-9]+[kmg]b?$")] = "16gb"
    restart: Literal["no", "always", "on-failure", "unless-stopped"] = "unless-stopped"
    # Headline text for the header block; facts come from the fields above.
    template_note: Text | None = None
    best_for: Text | None = None
    caveats: list[Text] = Field(default_factory=list)
    siblings: list[Id] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    notes: Text | None = None
