"""vLLM: the KV pool it reports at start-up and the per-GPU budget, by release.

available_kv = ceil(util x cudaMemGetInfo total) - non-KV memory - CUDA-graph estimate,
where what counts as non-KV memory is the release's accounting (`VllmEngineFacts`):
weights + activation peak + runtime before v0.27; from v0.27.0 also the caching-allocator
slack and the buffers allocated outside model loading (`vllm/utils/mem_utils.py`
`memory_profiling`: total_consumed from cudaMemGetInfo + transient peak headroom).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .common import (
    ACTIVATION_DTYPE_BYTES,
    CUDA_CONTEXT_BYTES,
    VLLM_CAPTURE_CAP,
    VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES,
    WEIGHT_VRAM_FACTORS,
)
from .layers import activation_peak_bytes, weights_per_gpu
from .shapes import VllmBudget, VllmFit, VllmInputs
from .vision import EncoderBatch, encoder_peak_bytes, profile_batch, replicated_bytes
from .vllm_pool import PoolLayout, needed_for_one_request, pool_layout, tokens_for_blocks
from .vllm_specs import pool_query

# Asks a vLLM release's own sizing code (`get_kv_cache_configs`) for the pool: the query of
# `vllm_specs.pool_query` in, its answer out (num_blocks, tokens, concurrency, block_bytes,
# boots), or None where it cannot answer (the hand formulas size the pool then).
PoolSizer = Callable[[dict[str, Any]], "dict[str, Any] | None"]

# --- CUDA graphs -------------------------------------------------------------------------


def capture_sizes(inputs: VllmInputs) -> list[int]:
    """The batch sizes vLLM's V1 runner captures (config/vllm.py _set_cudagraph_sizes).

    [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) up to the largest capture
    (default 2 x max_num_seqs x (1 + spec), at most 512, at most max_num_batched_tokens);
    with speculative decoding each size is rounded up to a multiple of 1 + spec
    (adjust_cudagraph_sizes_for_spec_decode) and sizes above the largest are dropped.
    """
    k = 1 + inputs.spec_tokens
    largest = inputs.cudagraph_capture_size or min(inputs.max_num_seqs * k * 2, VLLM_CAPTURE_CAP)
    largest = min(largest, inputs.max_num_batched_tokens)
    sizes = [1, 2, 4, *range(8, min(largest + 1, 256), 8), *range(256, largest + 1, 16)]
    sizes = [s for s in sizes if s <= largest]
    if k > 1:
        rounded = {-(-s // k) * k for s in sizes}
        sizes = sorted(s for s in rounded if s <= largest) or [k]
    return sizes


def _graph_terms(inputs: VllmInputs, n_sizes: int) -> tuple[int, int]:
    """(CUDA graphs charged to the budget, graphs landing on top of it)."""
    if inputs.enforce_eager:
        return 0, 0
    if inputs.cudagraph_reserve_bytes is not None:
        return inputs.cudagraph_reserve_bytes, 0
    facts = inputs.engine
    if facts.v2_runner and not facts.v2_cudagraphs_profiled:
        return 0, VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES
    per_size = inputs.constants.vllm_cudagraph_per_layer_size * inputs.shape.num_layers
    graphs = n_sizes * per_size
    return (graphs, 0) if facts.cudagraph_estimate else (0, graphs)


# --- weights and buffers -----------------------------------------------------------------


def _weight_factor(path: str) -> float:
    try:
        return WEIGHT_VRAM_FACTORS[path]
    except KeyError:
        raise ValueError(f"unknown weight path {path!r}") from None


def _weight_terms(inputs: VllmInputs) -> tuple[int, int]:
    """(target weights, drafter weights) per GPU."""
    factor = _weight_factor(inputs.weight_path)
    d = inputs.drafter
    target = inputs.weights_bytes - inputs.unloaded_weights_bytes
    if d is not None and d.embedded_in_target:
        target -= d.weights_bytes  # the head is counted as drafter, or not loaded at all
    whole = inputs.replicated_weights_bytes + replicated_bytes(inputs.vision, inputs.tp)
    weights = weights_per_gpu(int(target * factor), inputs.tp, whole)
    if not inputs.drafter_active or d is None:
        return weights, 0
    d_factor = factor if d.embedded_in_target else d.weight_vram_factor
    return weights, int(d.weights_bytes * d_factor) // inputs.tp


def persistent_buffers(inputs: VllmInputs) -> int:
    """Buffers the runner and the drafter allocate outside model loading, per GPU.

    The runner keeps inputs_embeds (max_num_batched_tokens x hidden) for models that take
    media. On the V1 runner a drafter keeps the target hidden states it drafts from (one per
    tap) and, for multimodal targets, its own inputs_embeds; on the V2 runner a drafter keeps
    one buffer of hidden states (the taps are combined before it: v1/worker/gpu/spec_decode
    speculator.py), and a DFlash drafter takes no media (dflash/speculator.py).
    """
    shape = inputs.shape
    row = inputs.max_num_batched_tokens * shape.hidden_size * ACTIVATION_DTYPE_BYTES
    rows = 1 if shape.multimodal else 0
    d = inputs.drafter
    if inputs.drafter_active and d is not None:
        media = 1 if shape.multimodal else 0
        if inputs.engine.v2_runner:
            rows += 1 + (0 if d.kind == "dflash" else media)
        else:
            rows += d.hidden_taps + media
    return rows * row


def allocator_slack(inputs: VllmInputs) -> int:
    """Caching-allocator slack free-memory accounting (v0.27+) charges but nothing holds:
    resident memory went down by as much as the pool did from v0.25.1 to v0.27.1."""
    if inputs.engine.non_kv_accounting != "free-memory":
        return 0
    c = inputs.constants
    if inputs.weight_path == "marlin4":
        return c.vllm_free_memory_slack_marlin4
    return c.vllm_free_memory_slack_other


def _profiler_extra(inputs: VllmInputs) -> int:
    """What free-memory accounting charges that torch-reserved accounting did not, and the
    buffers of a KV connector that run alongside the profile."""
    extra = inputs.constants.vllm_kv_connector_overhead if inputs.engine.kv_connector else 0
    if inputs.engine.non_kv_accounting != "free-memory":
        return extra
    return extra + allocator_slack(inputs) + persistent_buffers(inputs)


# --- the prediction ----------------------------------------------------------------------


def encoder_batch(inputs: VllmInputs) -> EncoderBatch | None:
    """The dummy media the profile run encodes (None: no tower modelled, or no media)."""
    v = inputs.vision
    if v is None:
        return None
    return profile_batch(
        v, inputs.max_num_batched_tokens, inputs.max_num_seqs, inputs.max_model_len
    )


def free_at_encoder(inputs: VllmInputs, loaded: int) -> int:
    """The card's free memory when the encoder runs: after the CUDA context and weights."""
    return inputs.gpu.cuda_total - CUDA_CONTEXT_BYTES - loaded


def encoder_peak(inputs: VllmInputs, loaded: int) -> int:
    """The vision encoder's profile-run transient (0: no tower modelled, or no media)."""
    batch = encoder_batch(inputs)
    if inputs.vision is None or batch is None:
        return 0
    free = free_at_encoder(inputs, loaded)
    return encoder_peak_bytes(inputs.vision, batch, free, inputs.gpu.cuda_total)


def _activations(inputs: VllmInputs, loaded: int) -> int:
    """The profile run's torch peak: the language model's forward, or the encoder's batch
    where that is higher (they run one after the other)."""
    lm = activation_peak_bytes(inputs.shape, inputs.tp, inputs.max_num_batched_tokens)
    return max(lm, encoder_peak(inputs, loaded))


def _budget(inputs: VllmInputs, n_sizes: int) -> tuple[dict[str, int], int]:
    """The charged terms, and what is resident outside vLLM's view."""
    weights, drafter = _weight_terms(inputs)
    graphs, graphs_on_top = _graph_terms(inputs, n_sizes)
    extra = _profiler_extra(inputs)
    outside = CUDA_CONTEXT_BYTES + graphs_on_top
    if inputs.engine.non_kv_accounting != "free-memory":
        outside += persistent_buffers(inputs)  # resident, but never charged
    terms = {
        "weights": weights,
        "drafter": drafter,
        "activations": _activations(inputs, weights + drafter),
        "cuda_graphs": graphs,
        "runtime_overhead": inputs.constants.vllm_runtime_overhead,
        "profiler_extra": extra,
    }
    return terms, outside


def _check(inputs: VllmInputs) -> None:
    if inputs.tp < 1 or inputs.max_model_len < 1 or inputs.max_num_seqs < 1:
        raise ValueError("tp, max_model_len and max_num_seqs must be positive")
    if inputs.mamba_cache_mode not in ("none", "align", "all"):
        raise ValueError(f"unknown mamba_cache_mode {inputs.mamba_cache_mode!r}")


@dataclass(frozen=True)
class _Pool:
    num_blocks: int
    block_bytes: int
    tokens: int
    concurrency: float
    boots: bool
    by: str


def _needed(inputs: VllmInputs, layout: PoolLayout) -> int:
    """What vLLM's start-up check asks for one max_model_len request."""
    if inputs.engine.boot_check_by_groups and not layout.uniform:
        return layout.blocks_per_request * layout.block_bytes
    return needed_for_one_request(inputs, layout)


def _hand_pool(inputs: VllmInputs, layout: PoolLayout, available: int, why: str) -> _Pool:
    num_blocks = max(0, available) // layout.block_bytes
    return _Pool(
        num_blocks,
        layout.block_bytes,
        tokens_for_blocks(num_blocks, layout, inputs.max_model_len),
        num_blocks / layout.blocks_per_request,
        available > 0 and available >= _needed(inputs, layout),
        why,
    )


def _pool(inputs: VllmInputs, layout: PoolLayout, available: int, sizer: PoolSizer | None) -> _Pool:
    """vLLM's own answer where a sizer gives one, else the hand formulas'."""
    answer = sizer(pool_query(inputs, available)) if sizer is not None else None
    if answer is None or "error" in answer:
        why = "hand formulas" + (f" (vLLM could not size it: {answer['error']})" if answer else "")
        return _hand_pool(inputs, layout, available, why)
    by = str(answer.get("by", "vLLM's get_kv_cache_configs"))
    return _Pool(
        int(answer["num_blocks"]),
        int(answer["block_bytes"]) or layout.block_bytes,
        int(answer["tokens"]),
        float(answer["concurrency"]),
        bool(answer["boots"]),
        by,
    )


def predict_vllm(inputs: VllmInputs, sizer: PoolSizer | None = None) -> VllmFit:
    """Predict vLLM's start-up KV pool and per-GPU budget before booting.

    `sizer`: vLLM's own sizing code, asked for the pool once the budget leaves `available`
    bytes; without one (or where it cannot answer) the hand formulas of vllm_pool.py.
    """
    _check(inputs)
    layout: PoolLayout = pool_layout(inputs)
    total = inputs.gpu.cuda_total
    n_sizes = len(capture_sizes(inputs))
    terms, outside = _budget(inputs, n_sizes)
    spent = sum(terms.values())
    if inputs.kv_cache_memory_bytes is not None:
        available = inputs.kv_cache_memory_bytes  # pinned: util no longer sizes the pool
        claimed = spent + available
    else:
        claimed = -(-total * round(inputs.gpu_memory_utilization * 10_000) // 10_000)
        available = claimed - spent
    pool = _pool(inputs, layout, available, sizer)
    desktop = inputs.gpu.desktop_reservation_bytes
    free = total - (claimed - allocator_slack(inputs)) - outside - desktop
    budget = VllmBudget(
        total=total,
        claimed_by_util=claimed,
        kv_pool=pool.num_blocks * pool.block_bytes,
        desktop_reservation=desktop,
        unaccounted=outside,
        free=free,
        **terms,
    )
    return VllmFit(
        kv_pool_tokens=pool.tokens,
        kv_pool_bytes_per_gpu=pool.num_blocks * pool.block_bytes,
        kv_available_bytes=available,
        kv_bytes_per_token_per_gpu=layout.full_token_bytes,
        fixed_state_bytes_per_request=layout.fixed_bytes_per_request,
        block_size=layout.block_size,
        group_size=layout.group_size,
        num_blocks=pool.num_blocks,
        blocks_per_request=layout.blocks_per_request,
        max_concurrency=pool.concurrency,
        capture_sizes=n_sizes,
        budget=budget,
        boots=pool.boots,
        fits=pool.boots and pool.concurrency >= inputs.max_num_seqs and free >= 0,
        headroom_tokens=pool.tokens - inputs.max_model_len * inputs.max_num_seqs,
        pool_by=pool.by,
    )
