"""Frozen inputs and outputs of the fit model."""

from __future__ import annotations

from dataclasses import dataclass, field

from .calibrated import DEFAULT_CONSTANTS, Constants
from .common import DRIVER_RESERVED_BYTES
from .vision import VisionProfile

# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelShape:
    """Architecture facts from config.json (text_config for multimodal models).

    num_kv_heads / head_dim describe the full-attention layers; sliding layers may have
    their own (Gemma 4). Linear layers are Gated-DeltaNet (linear_*) or Mamba-2 (mamba2_*).
    """

    num_layers: int
    num_kv_layers: int  # full-attention layers that grow a per-token KV cache
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    hidden_size: int
    intermediate_size: int
    vocab_size: int
    full_attention_interval: int | None = None  # layer i is full attention iff (i+1) % n == 0
    linear_num_key_heads: int = 0
    linear_num_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = 0
    mtp_layers: int = 0
    attn_output_gate: bool = False  # Qwen3-Next gated attention doubles q_proj
    # Qwen3.5-family configs carry mamba_ssm_dtype float32 and vLLM copies it into
    # --mamba-ssm-cache-dtype when that is 'auto'.
    ssm_state_dtype: str = "float32"
    sliding_layers: int = 0
    sliding_window: int = 0
    sliding_kv_heads: int = 0  # 0: num_kv_heads
    sliding_head_dim: int = 0  # 0: head_dim
    kv_shared_layers: int = 0  # layers that reuse an earlier layer's KV (no cache of their own)
    mamba2_layers: int = 0
    mamba2_heads: int = 0
    mamba2_head_dim: int = 0
    mamba2_state: int = 0
    mamba2_groups: int = 0
    mamba2_conv_kernel: int = 0
    moe_experts: int = 0
    moe_experts_per_token: int = 0
    moe_intermediate_size: int = 0
    moe_shared_intermediate_size: int = 0
    moe_layers: int = 0
    multimodal: bool = False  # the engine keeps an inputs_embeds buffer for media
    diffusion_canvas: int = 0
    tied_embeddings: bool = False  # the output layer reuses the input embedding

    @property
    def num_linear_layers(self) -> int:
        """Gated-DeltaNet layers: the ones that are neither full nor sliding attention."""
        if not self.linear_num_value_heads:
            return 0
        return self.num_layers - self.num_kv_layers - self.sliding_layers

    @property
    def num_state_layers(self) -> int:
        """Layers with a fixed recurrent state per sequence (GDN or Mamba-2)."""
        return self.num_linear_layers + self.mamba2_layers

    @property
    def window_kv_heads(self) -> int:
        return self.sliding_kv_heads or self.num_kv_heads

    @property
    def window_head_dim(self) -> int:
        return self.sliding_head_dim or self.head_dim

    def own_kv_layers(self) -> tuple[int, int]:
        """(full, sliding) layers that keep KV of their own (shared layers take the pattern)."""
        shared = self.kv_shared_layers
        total = self.num_kv_layers + self.sliding_layers
        if not shared or not total:
            return self.num_kv_layers, self.sliding_layers
        shared_full = round(shared * self.num_kv_layers / total)
        return self.num_kv_layers - shared_full, self.sliding_layers - (shared - shared_full)

    def kv_layer_indices(self) -> tuple[int, ...]:
        """Indices of the KV-bearing layers (every n-th for hybrids, else evenly spread)."""
        if self.full_attention_interval:
            n = self.full_attention_interval
            return tuple(i for i in range(self.num_layers) if (i + 1) % n == 0)
        # Without a layer pattern, spread them evenly; a dense model gets every layer.
        n, total = self.num_kv_layers, self.num_layers
        return tuple((k + 1) * total // n - 1 for k in range(n)) if n else ()

    def sliding_layer_indices(self) -> tuple[int, ...]:
        """Sliding-window layers: the attention layers that are not full attention."""
        if not self.sliding_layers:
            return ()
        full = set(self.kv_layer_indices())
        return tuple(i for i in range(self.num_layers) if i not in full)[: self.sliding_layers]


@dataclass(frozen=True)
class GpuSpec:
    """One GPU as the rig presents it."""

    vram_bytes: int  # NVML total (a 24 GiB RTX 3090: 25,769,803,776)
    desktop_reservation_bytes: int = 0  # held by a display server / other processes
    cuda_total_bytes: int | None = None  # cudaMemGetInfo total; default NVML - driver

    @property
    def cuda_total(self) -> int:
        if self.cuda_total_bytes is not None:
            return self.cuda_total_bytes
        return self.vram_bytes - DRIVER_RESERVED_BYTES


@dataclass(frozen=True)
class DrafterSpec:
    """A speculative-decoding drafter as vLLM loads it.

    kind 'mtp': the target's built-in MTP head (one attention layer with the target's
    attention shape; its weights are inside the target artifact when embedded_in_target).
    kind 'dflash': a DFlash/DFlash2 block-diffusion drafter with its own draft layers
    (z-lab/Qwen3.8-27B-DFlash2: 5 sliding-window layers, 8 KV heads x 128, window 2048,
    reading 5 target hidden-state taps); mixing sliding and full layers, it forces vLLM's
    V2 model runner from v0.27.
    """

    kind: str  # 'mtp' | 'dflash' | 'eagle' | 'draft_model'
    weights_bytes: int
    embedded_in_target: bool = False
    num_kv_layers: int = 1
    num_kv_heads: int | None = None  # None: the target's
    head_dim: int | None = None  # None: the target's
    sliding_window: int | None = None  # None: full attention
    hidden_taps: int = 1  # target hidden states buffered for the drafter
    weight_vram_factor: float = 1.0


@dataclass(frozen=True)
class VllmEngineFacts:
    """What the vLLM release changes in the sizing (registry engine `memory:`)."""

    non_kv_accounting: str = "free-memory"  # 'torch-reserved' (<= v0.26) | 'free-memory'
    cudagraph_estimate: bool = True  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    v2_runner: bool = False  # the target runs on the V2 model runner
    v2_cudagraphs_profiled: bool = False
    kv_connector: bool = False  # the image runs a KV connector (LMCache) beside the engine
    # A sliding window keeps every batch in flight, not one (v0.27: SlidingWindowSpec reads
    # VllmConfig.max_in_flight_tokens, two batches with async scheduling; v0.22 to v0.26
    # read max_num_batched_tokens).
    window_keeps_in_flight: bool = False
    # The boot check counts the padded groups (v0.25 on: _max_memory_usage_bytes_from_groups),
    # not each layer's own need (v0.22).
    boot_check_by_groups: bool = False


@dataclass(frozen=True)
class VllmInputs:
    """Everything vLLM's start-up memory sizing depends on (per profile)."""

    shape: ModelShape
    gpu: GpuSpec
    tp: int
    gpu_memory_utilization: float
    weights_bytes: int  # total artifact bytes (safetensors) of the target
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int = 8192
    kv_cache_dtype: str = "auto"
    model_dtype: str = "bfloat16"
    drafter: DrafterSpec | None = None
    num_speculative_tokens: int = 0  # 0 = drafter off even if one is declared
    kv_cache_memory_bytes: int | None = None  # --kv-cache-memory: replaces the util budget
    cudagraph_capture_size: int | None = None  # max_cudagraph_capture_size; None = default
    cudagraph_reserve_bytes: int | None = None  # VLLM_V2_CUDAGRAPH_MEM_MIB * MiB
    enforce_eager: bool = False
    mamba_cache_mode: str = "align"  # 'align' with prefix caching, 'none' without, 'all'
    mamba_ssm_cache_dtype: str = "auto"
    mamba_cache_dtype: str = "auto"  # conv state dtype
    weight_path: str = "native"  # key of WEIGHT_VRAM_FACTORS: how the weights are served
    replicated_weights_bytes: int = 0  # part of weights_bytes every rank holds whole
    unloaded_weights_bytes: int = 0  # part of weights_bytes never loaded (an unused MTP head)
    expert_parallel: bool = False
    # True when the club-3090 hybrid-kv-groups patch is applied: a sliding-window bucket
    # that is the smallest no longer sets the group size (16/48/5 -> 8 instead of 5).
    prefer_padding_sliding_window_groups: bool = False
    async_scheduling: bool | None = None  # None: vLLM's default for the drafter
    attention_backend: str | None = None  # the backend that serves the KV (named or picked)
    vision: VisionProfile | None = None  # a tower loaded and profiled as vision.py models it
    engine: VllmEngineFacts = field(default_factory=VllmEngineFacts)
    constants: Constants = DEFAULT_CONSTANTS

    @property
    def spec_tokens(self) -> int:
        return self.num_speculative_tokens if self.drafter is not None else 0

    @property
    def drafter_active(self) -> bool:
        return self.drafter is not None and self.num_speculative_tokens > 0


@dataclass(frozen=True)
class LlamaCppInputs:
    """A llama-server launch: model, context, cache types and GPU placement."""

    shape: ModelShape
    gpus: tuple[GpuSpec, ...]
    n_ctx: int
    # The GGUF's tensors (llama-server's "file size"); a file's size is as good: its header
    # (metadata, tokenizer) is under 0.1% of a catalogue model's.
    weights_bytes: int
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    n_parallel: int = 1
    n_ubatch: int = 512
    flash_attn: bool = True
    mmproj_bytes: int = 0
    mmproj_on_gpu: bool = True
    mtp_draft: bool = False  # --spec-type draft-mtp with the GGUF's nextn layers
    spec_n: int = 0  # draft tokens per step (--spec-draft-n-max) while drafting
    n_gpu_layers: int = 999
    tensor_split: tuple[float, ...] | None = None  # default: even (identical cards)
    cpu_resident_bytes: int = 0  # e.g. MoE experts kept on the host (--cpu-moe, -ot exps=CPU)
    output_bytes: int = 0  # output.weight (lm_head), placed on the last GPU
    swa_full: bool = False  # --swa-full: sliding layers keep the whole context
    backend: str = "cuda"  # cuda | cpu: where the compute graph runs
    constants: Constants = DEFAULT_CONSTANTS


@dataclass(frozen=True)
class SglangInputs:
    """An SGLang launch: the static memory fraction and the pools it splits."""

    shape: ModelShape
    gpu: GpuSpec
    tp: int
    mem_fraction_static: float
    weights_bytes: int
    context_length: int
    max_running_requests: int
    kv_cache_dtype: str = "auto"
    model_dtype: str = "bfloat16"
    page_size: int = 1
    speculative_draft_tokens: int = 0  # EAGLE draft tokens (spec decode reserves state)
    mamba_cache_size: int | None = None  # --max-mamba-cache-size; None: max_running_requests
    constants: Constants = DEFAULT_CONSTANTS


# --- outputs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class VllmBudget:
    """Per-GPU byte budget, in the order vLLM spends it."""

    total: int  # cudaMemGetInfo total
    claimed_by_util: int  # util x total, or the component sum when KV is pinned
    weights: int
    drafter: int  # drafter weights + its hidden-state buffers
    activations: int
    cuda_graphs: int  # subtracted from the budget (V1 estimate or explicit reserve)
    runtime_overhead: int
    profiler_extra: int  # what free-memory accounting charges beyond the terms above
    kv_pool: int
    desktop_reservation: int
    unaccounted: int  # outside vLLM's view: CUDA context, unreserved V2 graphs, buffers
    free: int  # physical slack (charged slack is not resident); negative: OOM at boot or soak

    def as_dict(self) -> dict[str, int]:
        return {name: int(getattr(self, name)) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class VllmFit:
    kv_pool_tokens: int  # what vLLM logs as "GPU KV cache size: N tokens"
    kv_pool_bytes_per_gpu: int
    kv_available_bytes: int  # "Available KV cache memory" (before rounding to blocks)
    kv_bytes_per_token_per_gpu: int  # marginal pool bytes per context token
    fixed_state_bytes_per_request: int  # mamba/GDN state + window pages per request
    block_size: int
    group_size: int
    num_blocks: int
    blocks_per_request: int
    max_concurrency: float  # requests of max_model_len the pool holds
    capture_sizes: int  # CUDA-graph batch sizes the V1 runner captures
    budget: VllmBudget
    boots: bool  # vLLM's own checks: one max_model_len request fits, budget positive
    fits: bool  # max_model_len x max_num_seqs fits and nothing overflows the card
    headroom_tokens: int  # kv_pool_tokens - max_model_len * max_num_seqs
    pool_by: str = "hand formulas"  # what sized the pool: vLLM's own code, or the formulas


@dataclass(frozen=True)
class LlamaCppGpuBudget:
    total: int  # NVML total of this GPU
    weights: int
    kv_cache: int
    recurrent_state: int
    mmproj: int
    compute_buffer: int
    runtime_overhead: int
    desktop_reservation: int
    free: int

    def as_dict(self) -> dict[str, int]:
        return {name: int(getattr(self, name)) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class LlamaCppFit:
    kv_cache_bytes: int  # the target's KV buffer ("KV buffer size" summed over GPUs)
    kv_cache_bytes_per_gpu: tuple[int, ...]
    kv_bytes_per_token: int
    drafter_kv_bytes: int
    recurrent_state_bytes: int
    budgets: tuple[LlamaCppGpuBudget, ...] = field(default_factory=tuple)
    host_weights_bytes: int = 0  # weights kept in host memory (the input embedding, experts)
    fits: bool = False
    headroom_bytes: int = 0  # smallest per-GPU free
    headroom_tokens: int = 0  # extra context the tightest GPU could still hold


@dataclass(frozen=True)
class SglangFit:
    kv_pool_tokens: int  # "KV Cache is allocated. #tokens: N" / max_total_num_tokens
    kv_pool_bytes_per_gpu: int
    kv_bytes_per_token_per_gpu: int
    mamba_pool_bytes_per_gpu: int
    weights_per_gpu: int
    static_bytes_per_gpu: int  # mem_fraction_static x free at start-up
    free_at_start: int
    outside_static: int  # what the fraction leaves for activations and graphs
    fits: bool
    headroom_tokens: int
