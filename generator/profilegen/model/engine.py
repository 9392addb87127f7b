"""An engine: a pinned container image of vLLM, llama.cpp (or a fork) or SGLang."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from ..families import kinds
from .common import EnvName, EnvSpec, Id, Strict, Text
from .evidence import IsoDate
from .tunable_values import value_problem

# A command name, or an absolute path whose steps are names (no `.`, `..` or empty step).
# Folders of a container the kernel provides: no image installs an engine there.
KERNEL_FOLDERS = ("proc", "dev", "sys")
BINARY = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.+-]*|(?:/(?!\.\.?(?:/|$))[A-Za-z0-9_.+-]+)+)")
TunableType = Literal["int", "float", "bool", "word", "path", "text"]


class Tunable(Strict):
    """A setting a rig owner may override with an environment variable."""

    env: EnvName
    # Dotted path that supplies the default: `profile.envelope.tp`, `engine.image_ref`;
    # a tunable whose field is unset in a profile is left out of that profile.
    field: (
        Annotated[str, StringConstraints(pattern=r"^(profile|engine)(\.[a-z_][a-z0-9_]*)+$")] | None
    ) = None
    default: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:/@+-]*$")] | None = None
    type: TunableType
    help: Text
    # Where the value is used: inside the container (entrypoint) or only by Compose.
    scope: Literal["container", "compose"] = "container"
    # How it reaches the engine: as (part of) a flag the dialect builds, or as a variable
    # the engine (or a patch of it) reads from its own environment.
    reaches: Literal["argv", "environment"] = "argv"

    @model_validator(mode="after")
    def _one_source(self) -> Tunable:
        if (self.field is None) == (self.default is None):
            raise ValueError(
                "env: a tunable takes its default from exactly one of field or default"
            )
        problem = None if self.default is None else value_problem(self.default, self.type)
        if problem is not None:
            # Every boot would refuse it: the entrypoint holds a default to the same rules.
            raise ValueError(f"default: a {self.type} tunable's default {problem}")
        return self


class VisionEncoderProfile(Strict):
    """How this build's profile run feeds one tower lineage its dummy media (fit/formulas/
    vision.py): the peak it reaches is charged before the KV pool is sized."""

    # per-item: one image or video frame per encoder call; chunked: as many as fit in
    # min(free / 2, total / 10) by the one-hot lookup's size (vLLM's gemma4 _encoder_chunk).
    batching: Literal["per-item", "chunked"]
    # How the image's transformers looks patch positions up: a one-hot matrix (its int64
    # one-hot and 16-bit copy set the peak) or an embedding lookup (no such transient).
    position_lookup: Literal["one-hot", "lookup"]
    # The date `batching` reached vLLM's main branch, where a nightly before it is on record:
    # a boot measured earlier ran one item per call.
    since: IsoDate | None = None
    source: Text


class EngineMemory(Strict):
    """How this build sizes its KV pool: the facts `fit` needs that change between versions.

    vLLM sizes the pool as gpu_memory_utilization x total minus what its start-up profiler
    charges as non-KV memory; what it charges is a property of the release.
    """

    # vLLM's non-KV accounting (vllm/utils/mem_utils.py memory_profiling):
    # torch-reserved: weights (torch-allocated while loading) + growth of non-torch memory
    #   (cuda used - torch reserved) + the activation peak above what was allocated when the
    #   profile run began (v0.26 and before);
    # free-memory: the drop in cudaMemGetInfo free memory from the worker's init snapshot to
    #   after the profile run + the transient peak above what is allocated after it (from
    #   v0.27.0). It also charges what the first never did: caching-allocator slack left by
    #   weight repacking, and buffers allocated outside model loading (runner, drafter).
    non_kv_accounting: Literal["torch-reserved", "free-memory"] | None = None
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: the V1 runner's CUDA graphs are estimated and
    # subtracted before sizing the pool (the default since v0.21.0).
    cudagraph_estimate: bool = True
    # Which models get vLLM's V2 model runner by default (hybrid models keep V1 throughout):
    # none; qwen3 (Qwen3 dense, v0.22); llama-mistral-qwen3 (v0.23, #43458); dense (v0.25,
    # #44443). DFlash drafts that mix sliding and full layers force V2 where `forces_v2`.
    v2_runner_default: Literal["none", "qwen3", "llama-mistral-qwen3", "dense"] = "none"
    dflash_forces_v2: bool = False
    # The V2 runner's profile_cudagraph_memory returns 0 up to v0.28: its graphs land on top
    # of the utilization budget unless a patch reserves them.
    v2_cudagraphs_profiled: bool = False
    # A KV connector running beside vLLM in the image (LMCache's MP server): its GPU memory
    # grows while vLLM profiles and is charged to the budget.
    kv_connector: Literal["lmcache"] | None = None
    # SGLang: --mem-fraction-static is the share of the free memory at start-up (after the
    # distributed init, before the weights) that weights and the KV pool may take.
    static_fraction_of: Literal["free-at-start"] | None = None
    # Per tower lineage (architecture.vision_encoder): how the profile run encodes its media.
    vision_encoders: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]{0,39}$")],
        VisionEncoderProfile,
    ] = Field(default_factory=dict)
    # Where these facts were read (release notes, source files at the tag).
    source: Text | None = None


class Engine(Strict):
    id: Id
    # The engine family (families/): what kind of server the image runs.
    kind: Annotated[str, Field(json_schema_extra={"enum": list(kinds())})]
    name: Text
    image: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._/-]*[a-z0-9]$")]
    # A tag, a digest or both; a digest alone pins an image built without an immutable tag.
    tag: (
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")] | None
    ) = None
    digest: Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    # Environment variable that lets a rig owner swap the image (e.g. VLLM_IMAGE).
    image_env: EnvName | None = None
    # A command name the image's PATH finds, or an absolute path without `.`/`..` steps; never
    # an option (it is the first word bash runs).
    binary: Annotated[
        str,
        StringConstraints(max_length=255),
        Field(json_schema_extra={"pattern": f"^{BINARY.pattern}$"}),
    ]
    # Words between the binary and the server's arguments (`-m sglang.launch_server`).
    binary_args: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.=-]+$")]] = Field(
        default_factory=list
    )
    # Multi-process engines (vLLM, SGLang) share tensors through host IPC and /dev/shm;
    # llama.cpp is one process and gets neither `ipc: host` nor `shm_size`.
    ipc_host: bool = True
    container_port: Annotated[int, Field(ge=1, le=65535)]
    # The server's health endpoint (200 once the model is loaded) and how long a first boot
    # may take before it answers (weights read, torch.compile, CUDA graphs captured): the
    # Kubernetes probes are built from both.
    health_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_./-]*$")] = "/health"
    startup_budget_s: Annotated[int, Field(ge=60, le=86400)] = 1800
    # Where boot-time patches apply inside the image (the engine's package dir).
    package_dir: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_./-]*$")] | None = None
    model_mount: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_./-]*$")]
    model_mount_readonly: bool = False
    patch_mount_root: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_./-]*$")] = (
        "/etc/profilegen/patches"
    )
    # Flags this engine understands; a profile asking for another one is a finding.
    flags: list[Annotated[str, StringConstraints(pattern=r"^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$")]] = (
        Field(default_factory=list)
    )
    kv_cache_dtypes: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+$")]] = Field(
        default_factory=list
    )
    tunables: list[Tunable] = Field(default_factory=list)
    # Container variables every profile of this engine gets (a profile may override each).
    env: dict[EnvName, EnvSpec] = Field(default_factory=dict)
    # How this build spells a modelled fact's flag where it differs from its family's
    # (llama.cpp forks: `ctx_size: --ctx-size`); keys are the facts of render/dialects.
    spellings: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z_]+$")],
        Annotated[str, StringConstraints(pattern=r"^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$")],
    ] = Field(default_factory=dict)
    # llama.cpp builds: the --spec-type value per drafter method, and whether the draft width
    # is its own flag (`flags`) or inside the --spec-type value (`compound`: ik_llama).
    spec_types: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+$")],
        Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]+$")],
    ] = Field(default_factory=dict)
    spec_style: Literal["flags", "compound"] = "flags"
    # On/off facts this build switches on with the bare flag and off by leaving it out
    # (ik_llama's `--fit`), where its family writes `FLAG on|off`.
    bare_switches: list[Annotated[str, StringConstraints(pattern=r"^[a-z_]+$")]] = Field(
        default_factory=list
    )
    # The release the image carries (0.27.1; a fork names the upstream release it follows).
    version: (
        Annotated[
            str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+(\.[0-9]+)?([.+-][A-Za-z0-9.]+)?$")
        ]
        | None
    ) = None
    memory: EngineMemory | None = None
    notes: Text | None = None

    @field_validator("kind")
    @classmethod
    def _family(cls, value: str) -> str:
        if value not in kinds():
            raise ValueError(f"{value!r} is not an engine family (known: {', '.join(kinds())})")
        return value

    @field_validator("binary")
    @classmethod
    def _command(cls, value: str) -> str:
        if not BINARY.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a command: give a name the image's PATH finds (vllm) or an "
                "absolute path without . or .. steps (/app/llama-server), never an option"
            )
        if any(value.startswith(f"/{kernel}/") for kernel in KERNEL_FOLDERS):
            raise ValueError(
                f"{value!r} is in a folder the kernel fills, not the image: give the path the "
                "image installs the engine at (/app/llama-server)"
            )
        return value

    @model_validator(mode="after")
    def _pinned(self) -> Engine:
        if self.tag is None and self.digest is None:
            raise ValueError("tag: an image needs a tag, a digest or both")
        return self

    @property
    def image_ref(self) -> str:
        ref = self.image if self.tag is None else f"{self.image}:{self.tag}"
        return f"{ref}@{self.digest}" if self.digest else ref
