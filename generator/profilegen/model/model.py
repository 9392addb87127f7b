"""A model: architecture facts a fit model needs, and its artifacts on Hugging Face."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from .common import GitCommit, Id, PositiveInt, ServedName, Size, Strict, Text

HF_REPO_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"
HfRepo = Annotated[str, StringConstraints(pattern=HF_REPO_PATTERN)]
RepoPath = Annotated[
    str, StringConstraints(pattern=r"^(?!/)(?!.*\.\.)[A-Za-z0-9._+/\[\]-]{1,255}$")
]
# A folder under the model cache; catalogues nest variants (`qwen3.8-27b-gguf/unsloth-iq4xs`).
LocalDir = Annotated[
    str,
    StringConstraints(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,3}$"
    ),
]


class Artifact(Strict):
    """Files on the Hub that a profile mounts: main weights, a drafter or a projector."""

    repo: HfRepo
    # A 40-hex commit pins the artifact; a branch or tag name is allowed but flagged.
    revision: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._/-]{1,128}$")] | None = None
    # Files to take from the repo; empty means the whole repo.
    files: list[RepoPath] = Field(default_factory=list)
    # Unknown (None) until `profilegen lock` reads it from the Hub.
    size: Size | None = None
    format: Literal[
        "safetensors", "compressed-tensors", "gguf", "fp8", "nvfp4", "awq", "gptq", "auto-round"
    ]
    quantization: (
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_. ()/-]{1,80}$")] | None
    ) = None
    kind: Literal["main", "draft", "mmproj"] = "main"
    # Storage type of the quantized linear weights, for `profilegen fit`; needed only
    # where `format` does not tell it (compressed-tensors holds W4A16 as well as FP8).
    weight_dtype: Literal["bf16", "fp16", "fp8", "int8", "int4", "nvfp4"] | None = None
    # Folder under the model cache the compose mounts (whole-repo artifacts) or holds files.
    local_dir: LocalDir
    # Folder inside the repo (and local_dir) the engine loads, for repos with variants.
    subfolder: RepoPath | None = None
    gated: bool = False
    notes: Text | None = None

    @property
    def size_bytes(self) -> int | None:
        return None if self.size is None else self.size.bytes

    @property
    def pinned(self) -> bool:
        return (
            self.revision is not None
            and len(self.revision) == 40
            and all(c in "0123456789abcdef" for c in self.revision)
        )


StateDtype = Literal["float32", "bfloat16", "float16"]


class LinearAttention(Strict):
    """Gated-DeltaNet style layers: a fixed recurrent state per sequence, no per-token KV.

    They are the layers that are neither full nor sliding attention.
    """

    num_key_heads: PositiveInt
    num_value_heads: PositiveInt
    key_head_dim: PositiveInt
    value_head_dim: PositiveInt
    conv_kernel: PositiveInt
    # The recurrent (SSM) state's element type: config.json `mamba_ssm_dtype` (float32 in
    # the Qwen3.5 family); the engine keeps it unless told otherwise.
    state_dtype: StateDtype = "float32"


class Mamba2(Strict):
    """Mamba-2 (SSD) layers (Nemotron-H): a fixed conv + SSM state per sequence.

    Counted apart from full_attention_layers; the other layers of such a model (MoE, MLP)
    hold no cache at all.
    """

    layers: PositiveInt
    num_heads: PositiveInt  # config.json mamba_num_heads
    head_dim: PositiveInt  # mamba_head_dim
    state_size: PositiveInt  # ssm_state_size
    n_groups: PositiveInt = 1
    conv_kernel: PositiveInt
    state_dtype: StateDtype = "float32"


class Moe(Strict):
    """Mixture of experts: all experts are weights, a few run per token."""

    num_experts: PositiveInt
    experts_per_token: PositiveInt
    moe_intermediate_size: PositiveInt | None = None
    shared_experts: Annotated[int, Field(ge=0)] = 0
    shared_intermediate_size: PositiveInt | None = None
    # Layers with an expert block; unset: every layer (Nemotron-H and Inkling have fewer).
    layers: PositiveInt | None = None


class Architecture(Strict):
    # The deepest models have a few hundred layers; fit walks them one by one.
    num_layers: Annotated[int, Field(gt=0, le=4096)]
    # Layers that grow a per-token KV cache (all of them for a plain transformer).
    full_attention_layers: PositiveInt
    hidden_size: PositiveInt
    num_attention_heads: PositiveInt
    num_kv_heads: PositiveInt
    head_dim: PositiveInt
    intermediate_size: PositiveInt | None = None
    vocab_size: PositiveInt | None = None
    max_position_embeddings: PositiveInt
    linear_attention: LinearAttention | None = None
    mamba: Mamba2 | None = None
    # Sliding-window attention (Gemma): these layers keep only the last `sliding_window` tokens.
    sliding_window: PositiveInt | None = None
    sliding_window_layers: Annotated[int, Field(ge=0)] = 0
    # Where sliding layers differ from the full-attention ones (Gemma 4: 16 KV heads of 256
    # on the sliding layers, num_global_key_value_heads of global_head_dim 512 on the full
    # ones, which num_kv_heads and head_dim then describe). Unset: the same as the full ones.
    sliding_kv_heads: PositiveInt | None = None
    sliding_head_dim: PositiveInt | None = None
    # The last layers that reuse an earlier layer's KV instead of keeping their own (Gemma 3n
    # and the small Gemma 4 models: num_kv_shared_layers).
    kv_shared_layers: Annotated[int, Field(ge=0)] = 0
    # Diffusion LMs (DiffusionGemma) denoise a canvas of this many tokens per step.
    diffusion_canvas: PositiveInt | None = None
    moe: Moe | None = None
    mtp_layers: Annotated[int, Field(ge=0)] = 0
    # config.json attn_output_gate (Qwen3-Next family): q_proj is twice as wide.
    attn_output_gate: bool = False
    vision: bool = False
    # The vision tower's lineage (qwen3-vl, gemma4, ...): vLLM profiles that encoder on dummy
    # images before it sizes the KV pool; fit carries its peak only for a tower that the
    # fitted constants were measured with.
    vision_encoder: (
        Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]{0,39}$")] | None
    ) = None
    # Parameters of the vision tower and its projector (16-bit in the checkpoint): an engine
    # that does not shard the tower holds all of them on every rank.
    vision_tower_params: PositiveInt | None = None
    dtype: Literal["bfloat16", "float16"] = "bfloat16"
    # config.json tie_word_embeddings: the output layer is the input embedding (a GGUF then
    # holds it once; llama.cpp keeps the embedding on the host and a copy on the GPU).
    tied_embeddings: bool = False

    @model_validator(mode="after")
    def _layers(self) -> Architecture:
        if self.full_attention_layers > self.num_layers:
            raise ValueError(
                f"full_attention_layers: full_attention_layers ({self.full_attention_layers}) exceeds "
                f"num_layers ({self.num_layers})"
            )
        if self.num_attention_heads % self.num_kv_heads:
            raise ValueError("num_kv_heads: num_attention_heads must be a multiple of num_kv_heads")
        hybrid = self.full_attention_layers < self.num_layers
        if (
            hybrid
            and self.linear_attention is None
            and self.mamba is None
            and not self.sliding_window_layers
        ):
            raise ValueError(
                "full_attention_layers: a hybrid model (fewer full-attention layers than layers) "
                "needs linear_attention, mamba or sliding-window layers"
            )
        if self.sliding_window_layers and self.sliding_window is None:
            raise ValueError("sliding_window: sliding-window layers need the window size")
        cached = self.full_attention_layers + self.sliding_window_layers
        cached += self.mamba.layers if self.mamba else 0
        if cached > self.num_layers:
            raise ValueError(
                f"num_layers: {cached} full, sliding and mamba layers exceed num_layers "
                f"({self.num_layers})"
            )
        if self.sliding_kv_heads and self.num_attention_heads % self.sliding_kv_heads:
            raise ValueError(
                "sliding_kv_heads: num_attention_heads must be a multiple of sliding_kv_heads"
            )
        return self


class Sampling(Strict):
    """The checkpoint's recommended sampling defaults (generation_config.json)."""

    temperature: Annotated[float, Field(ge=0)] | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    top_k: Annotated[int, Field(ge=-1)] | None = None
    min_p: Annotated[float, Field(ge=0, le=1)] | None = None
    repetition_penalty: Annotated[float, Field(gt=0)] | None = None


# A fact of a model, named by its dotted path: `architecture.num_layers`,
# `artifacts.q4km.size`, `sampling.top_k`.
FactPath = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z_][a-z0-9_]*(\.[a-z0-9_][a-z0-9._-]*)*$", max_length=200),
]


class FactSource(Strict):
    """A file of a Hub repo at a commit that facts were read from."""

    repo: HfRepo
    revision: GitCommit
    file: RepoPath


class FactOrigin(Strict):
    """Which source a fact was read from, and the key in that file."""

    source: Id
    # The key the value was read from (`num_hidden_layers`, `llama.block_count`); none where
    # the file as a whole says it (a projector file means vision).
    key: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\[\]/ -]{1,128}$")] | None = None
    # Set where the value is not read but worked out from what the source says (an
    # artifact's size from the parameter count config.json implies): how, in words.
    estimate: Text | None = None


class Provenance(Strict):
    """Where each fact comes from: read from a checkpoint file, or "stated" by hand.

    Facts not listed were written by hand before provenance was recorded.
    """

    sources: dict[Id, FactSource] = Field(default_factory=dict)
    facts: dict[FactPath, FactOrigin | Literal["stated"]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _sources_known(self) -> Provenance:
        for path, origin in self.facts.items():
            if isinstance(origin, FactOrigin) and origin.source not in self.sources:
                raise ValueError(
                    f"facts: {path} is read from source {origin.source!r}, which sources "
                    f"does not list ({', '.join(sorted(self.sources)) or 'none'})"
                )
        return self


class Model(Strict):
    id: Id
    name: Text
    family: Id
    served_name: ServedName
    architecture: Architecture
    # Needed only for models whose code lives on the Hub; the reason is mandatory.
    trust_remote_code: Text | None = None
    chat_template: Text | None = None
    artifacts: dict[Id, Artifact]
    sampling: Sampling | None = None
    provenance: Provenance = Provenance()
    notes: Text | None = None

    @model_validator(mode="after")
    def _provenance_names_facts(self) -> Model:
        data = self.model_dump(exclude={"provenance"})
        for path in self.provenance.facts:
            if not _states(data, path):
                raise ValueError(f"provenance: {path} names no fact this model states")
        return self


def _states(node: object, path: str) -> bool:
    """Whether the dumped model holds a value at the dotted path (keys may hold dots)."""
    if not path:
        return node is not None
    if not isinstance(node, dict):
        return False
    # Artifact ids may hold dots (`q4.k`): try the longest key first.
    for key in sorted(node, key=len, reverse=True):
        if path == key or path.startswith(f"{key}."):
            return _states(node[key], path[len(key) + 1 :])
    return False
