"""A serving profile: model + engine + drafter + patches + hardware envelope, and evidence."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from .advice import Exposure, Recommendation, Source
from .common import (
    ComposeLiteral,
    EnvName,
    EnvSpec,
    Fraction,
    Id,
    PositiveInt,
    ServedName,
    Size,
    Status,
    Strict,
    Text,
    Word,
)
from .evidence import Evidence, headline, newest
from .kubernetes import ProfileKubernetes
from .runtime import Runtime
from .settings import ApiKeyPolicy
from .tunable_values import format_default, value_problem

ContainerPath = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_.@+/-]*$")]
HostPath = Annotated[str, StringConstraints(pattern=r"^(~|\.|/)[A-Za-z0-9_.@+/-]*$")]
Scalar = bool | int | float | Text
JsonScalar = bool | int | float | Annotated[str, StringConstraints(pattern=r"^[^\x00-\x1f]*$")]
JsonValue = JsonScalar | list[JsonScalar] | dict[str, JsonScalar] | None


def _ip_address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 address") from None
    return value


# Compose reads a size with go-units' RAMInBytes: the digits as a float64, times the unit
# (binary), cast to a 64-bit integer. From 2**63 bytes on the cast wraps to a negative size
# (`99999999999999999999g` is -9223372036854775808 to `docker compose config`).
_SHM_UNITS = {"k": 2**10, "m": 2**20, "g": 2**30}
SHM_LIMIT = 2**63


def shm_bytes(value: str) -> float:
    """What Compose computes from a size (before its cast to an integer)."""
    digits = value.rstrip("b")
    return float(digits[:-1]) * _SHM_UNITS[digits[-1]]


def _compose_size(value: str) -> str:
    if len(value) > 24 or shm_bytes(value) >= SHM_LIMIT:
        raise ValueError(
            f"{value[:24]}{'…' if len(value) > 24 else ''} is 8 EiB or more, past the 64-bit "
            "byte count Compose reads a size into (it wraps to a negative size)"
        )
    return value


IpAddress = Annotated[
    str, StringConstraints(pattern=r"^[0-9a-fA-F.:]+$"), AfterValidator(_ip_address)
]


class Envelope(Strict):
    """The hardware envelope; each engine uses the fields it understands."""

    tp: PositiveInt
    # Pipeline-parallel size (vLLM --pipeline-parallel-size); unset: the flag is not passed.
    pp: PositiveInt | None = None
    max_model_len: PositiveInt
    # llama.cpp: no context flag; the engine sizes its context itself (the model's maximum,
    # or less where --fit shrinks it) and max_model_len is what it is expected to reach.
    auto_context: bool = False
    max_num_seqs: PositiveInt = 1
    # Unset: the engine's default (vLLM: the model's dtype; llama.cpp: f16); the flag is not passed.
    kv_cache_dtype: Word | None = None
    gpu_memory_utilization: Fraction | None = None
    # Pins vLLM's KV pool in bytes instead of deriving it from the utilization.
    kv_cache_memory: PositiveInt | None = None
    max_num_batched_tokens: PositiveInt | None = None
    long_prefill_token_threshold: Annotated[int, Field(ge=0)] | None = None
    mamba_ssm_cache_dtype: Word | None = None
    mamba_cache_mode: Word | None = None
    attention_backend: Word | None = None
    cudagraph_max_capture: PositiveInt | None = None
    cudagraph_mem_mib: PositiveInt | None = None
    custom_ops: list[Word] = Field(default_factory=list)
    # Unset: the engine picks from the checkpoint (the flag is not passed).
    dtype: Literal["bfloat16", "float16", "half", "auto"] | None = None
    # How the engine loads the weights (SGLang `--quantization auto-round`); unset: the checkpoint
    # config decides.
    quantization: Word | None = None
    # True/False pass the engine's on/off flag; unset leaves the engine's default.
    prefix_caching: bool | None = None
    chunked_prefill: bool | None = None
    async_scheduling: bool | None = None
    # Custom all-reduce (vLLM): auto disables it unless NVLink is found at boot, off always
    # disables it (--disable-custom-all-reduce), on never does.
    custom_all_reduce: Literal["auto", "off", "on"] = "auto"
    enforce_eager: bool = False
    expert_parallel: bool = False
    # Per-prompt media limits (vLLM --limit-mm-per-prompt), e.g. {image: 1, video: 0}.
    limit_mm_per_prompt: (
        dict[Annotated[str, StringConstraints(pattern=r"^[a-z]+$")], int] | None
    ) = None
    # llama.cpp: batch sizes, offload and how layers split over cards.
    batch_size: PositiveInt | None = None
    ubatch_size: PositiveInt | None = None
    gpu_layers: Annotated[int, Field(ge=0)] | Literal["all"] | None = None
    split_mode: Literal["none", "layer", "row", "graph"] | None = None
    tensor_split: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    flash_attn: bool | None = None
    # Weights kept outside the GPUs: cpu-experts (llama.cpp MoE experts computed on the CPU),
    # uva (vLLM pages experts over PCIe), prefetch (vLLM streams layers); host_ram is the
    # host memory that needs at worst.
    offload: Literal["cpu-experts", "uva", "prefetch"] | None = None
    host_ram: Size | None = None
    # llama.cpp: a V-cache type other than the K type (kv_cache_dtype).
    kv_cache_dtype_v: Word | None = None
    # vLLM --compilation-config keys beyond the capture size and custom ops.
    compilation: dict[Annotated[str, StringConstraints(pattern=r"^[a-z_]+$")], JsonValue] = Field(
        default_factory=dict
    )

    @property
    def context_flag(self) -> int | None:
        """The context the command passes (None where the engine sizes it)."""
        return None if self.auto_context else self.max_model_len


class SamplerRow(Strict):
    """Sampler defaults that replace the instruct row when thinking is switched on."""

    temperature: Annotated[float, Field(ge=0)] | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    top_k: Annotated[int, Field(ge=-1)] | None = None
    min_p: Annotated[float, Field(ge=0, le=1)] | None = None
    presence_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    repetition_penalty: Annotated[float, Field(gt=0)] | None = None


class Sampler(SamplerRow):
    """Default sampling parameters the engine applies; unset fields are not passed."""

    @model_validator(mode="after")
    def _something(self) -> Sampler:
        if all(getattr(self, name) is None for name in type(self).model_fields):
            raise ValueError("sampler: set at least one sampling parameter (or drop the sampler)")
        return self


def _no_key_flag(args: list[str]) -> list[str]:
    for arg in args:
        if arg.split("=", 1)[0] in ("--api-key", "--api-key-file"):
            raise ValueError(
                f"{arg.split('=', 1)[0]} is not an extra argument: the entrypoint hands the "
                "engine API_KEY (or API_KEY_FILE) at boot, never on its command line"
            )
    return args


class Serve(Strict):
    # Whether the server refuses to boot without API_KEY (or API_KEY_FILE); unset: the
    # registry's serving.api_key (registry/settings.yaml).
    api_key: ApiKeyPolicy | None = None
    reasoning_parser: Word | None = None
    tool_call_parser: Word | None = None
    auto_tool_choice: bool = False
    # Keys become JSON keys of --default-chat-template-kwargs.
    chat_template_kwargs: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]*$")], Scalar
    ] = Field(default_factory=dict)
    sampler: Sampler | None = None
    # Generation defaults beyond the sampler (vLLM --override-generation-config keys).
    generation: dict[Annotated[str, StringConstraints(pattern=r"^[a-z_]+$")], JsonScalar] = Field(
        default_factory=dict
    )
    # The row ENABLE_THINKING=true switches to (fields it leaves unset keep the sampler's).
    sampler_thinking: SamplerRow | None = None
    # llama.cpp --reasoning-budget: tokens of thinking before the answer is forced.
    reasoning_budget: Annotated[int, Field(ge=-1)] | None = None
    language_model_only: bool = False
    # llama.cpp --jinja: render the checkpoint's chat template with Jinja.
    jinja: bool = False
    # Why the engine loads the checkpoint with remote code (--trust-remote-code); the model's
    # own reason (Model.trust_remote_code) applies to every profile of it.
    trust_remote_code: Text | None = None
    # Names the engine answers to (vLLM --served-model-name, llama.cpp --alias); empty: the
    # model's served_name (vLLM) or the engine's default id (llama.cpp without --alias).
    served_names: list[ServedName] = Field(default_factory=list)
    # Extra names a gateway routes to the first served name (the engine never sees them).
    gateway_aliases: list[ServedName] = Field(default_factory=list)
    # A chat template file (from a patch) the engine loads instead of the checkpoint's.
    chat_template: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_.@+/-]*$")] | None = None
    # Engine flags not modelled above, in order; each must be a flag the engine knows.
    extra_args: Annotated[list[Text], AfterValidator(_no_key_flag)] = Field(default_factory=list)


class DrafterUse(Strict):
    id: Id
    width: Annotated[int, Field(ge=0)]
    # llama.cpp forks: the least draft probability kept (ik_llama's p_min).
    min_probability: Annotated[float, Field(ge=0, le=1)] | None = None
    # False where the engine takes no width flag for this drafter (beellama's DFlash).
    pass_width: bool = True
    # Engine words passed only while drafting, not modelled as facts (listed by import).
    extra_args: list[Text] = Field(default_factory=list)
    # Refuse to boot (exit 1) when the drafter's file is not in the model folder. Every
    # entrypoint now looks for a drafter's own weights while drafting, whatever this says.
    require_file: bool = False
    # llama.cpp: the draft model's GPU layers and device, and DFlash's cross-attention context
    # (forks); passed whenever the profile drafts, as the engine ignores them otherwise.
    gpu_layers: Annotated[int, Field(ge=0)] | Literal["all"] | None = None
    device: Word | None = None
    cross_ctx: PositiveInt | None = None


class Mount(Strict):
    """A host path mounted into the container; host_env lets a rig owner move it."""

    host: HostPath
    container: ContainerPath
    host_env: EnvName | None = None
    readonly: bool = True
    help: Text | None = None


class ProfileTunable(Strict):
    # Defaults land inside `${VAR:-default}`: only characters Compose reads literally.
    default: bool | int | float | ComposeLiteral
    type: Literal["int", "float", "bool", "word", "path", "text"]
    help: Text

    @model_validator(mode="after")
    def _boots(self) -> ProfileTunable:
        # Every boot would refuse it: the entrypoint holds a default to the same rules.
        problem = value_problem(format_default(self.default, self.type), self.type)
        if problem is not None:
            raise ValueError(f"default: a {self.type} tunable's default {problem}")
        return self


class Deviation(Strict):
    """A deliberate difference from the upstream server the evidence was measured on."""

    what: Text
    reason: Text


class Profile(Strict):
    id: Id
    # Abstract profiles only carry shared values for others to extend.
    abstract: bool = False
    extends: Id | None = None
    upstream_key: (
        Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")]
        | None
    ) = None
    # The upstream catalogue revision this profile was taken from (a commit, 8-40 hex).
    upstream_rev: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8,40}$")] | None = None
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
    # Profiles never served beside this one on one host (configurations of one rig that run
    # one at a time): they may share its port even when they serve another model. Either
    # profile listing the other is enough.
    alternatives: list[Id] = Field(default_factory=list)
    bind_host: IpAddress = "0.0.0.0"
    # NVLink detection at boot (NVLINK_MODE); unset: no detection (one GPU, llama.cpp).
    nvlink_mode: Literal["auto", "force_off", "force_on", "pcie_p2p"] | None = None
    envelope: Envelope
    serve: Serve = Serve()
    runtime: Runtime = Runtime()
    # On/off defaults for switchable patches (e.g. W4A8), overriding the patch's own.
    switches: dict[EnvName, bool] = Field(default_factory=dict)
    tunables: dict[EnvName, ProfileTunable] = Field(default_factory=dict)
    # Other host variables a tunable reads when it is unset, in order ({CTX_SIZE: [CTX]}):
    # the names a migrated server's .env files use keep working.
    tunable_aliases: dict[EnvName, list[EnvName]] = Field(default_factory=dict)
    # Container variables over the engine's own: literal, host pass-through (null) or EnvFrom.
    env: dict[EnvName, EnvSpec] = Field(default_factory=dict)
    # Keyed so that a profile can override or add one mount of the profile it extends.
    mounts: dict[Id, Mount] = Field(default_factory=dict)
    # How a cluster provides what the compose file takes from the host (`render --target k8s`).
    kubernetes: ProfileKubernetes | None = None
    # Group id the container runs with (`user: 0:<gid>`), when the profile needs one.
    user_gid: Annotated[int, Field(ge=0)] | None = None
    shm_size: Annotated[
        str, StringConstraints(pattern=r"^[0-9]+[kmg]b?$"), AfterValidator(_compose_size)
    ] = "16gb"
    restart: Literal["no", "always", "on-failure", "unless-stopped"] = "unless-stopped"
    # Headline text for the header block; facts come from the fields above.
    template_note: Text | None = None
    best_for: Text | None = None
    # Where best_for was read (unset: a maintainer's own words, which `check` asks a source for).
    best_for_source: Source | None = None
    # Known engine bugs the profile runs into. Unset: not stated (`check` warns); an empty list:
    # none known, as exposures_source says (the file that states its risks and names none).
    exposures: list[Exposure] | None = None
    exposures_source: Source | None = None
    # Picks, quality figures and warnings about the profile, each with its source.
    recommendations: list[Recommendation] = Field(default_factory=list)
    caveats: list[Text] = Field(default_factory=list)
    siblings: list[Id] = Field(default_factory=list)
    deviations: list[Deviation] = Field(default_factory=list)
    # How this profile's command spells a fact's flag, where its engine build's usual one
    # differs (`max_model_len: --ctx-size`): the same flag, written as the measured server did.
    spellings: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z_]+$")],
        Annotated[str, StringConstraints(pattern=r"^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$")],
    ] = Field(default_factory=dict)
    evidence: list[Evidence] = Field(default_factory=list)
    notes: Text | None = None

    @property
    def headline_evidence(self) -> Evidence | None:
        """The record a summary leads with (the newest speed on the profile's own rig)."""
        return headline(self.evidence, self.rig)

    @property
    def quality_evidence(self) -> Evidence | None:
        return newest(self.evidence, lambda ev: bool(ev.measured.quality))

    @property
    def evidence_on_rig(self) -> int:
        return sum(ev.rig == self.rig for ev in self.evidence)
