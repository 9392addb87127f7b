"""A fitted profile (`Target`) as the inputs of its engine's formulas: vLLM, llama.cpp, SGLang."""

from __future__ import annotations

import re

from ..lockfile.lock import Lock
from ..model import Engine
from ..model.kv_backends import kv_dtype_decision
from ..model.model import Model
from ..registry import Registry
from ..units import MIB
from . import formulas as fm
from .inputs import (
    DEFAULT_VLLM_MEMORY,
    SGLANG_DEFAULT_FRACTION,
    VLLM_DEFAULT_BATCHED_TOKENS,
    VLLM_DEFAULT_UTIL,
    VLLM_LARGE_CARD_BYTES,
    VLLM_SMALL_CARD_BATCHED_TOKENS,
    Target,
    drafter_spec,
    gpu_spec,
    model_shape,
    model_weights_bytes,
    patch_effects,
    tightest_card,
    unloaded_head_bytes,
    weight_path,
)
from .media import vision_profile

DENSE_V2_FAMILIES = {"qwen3": ("qwen3",), "llama-mistral-qwen3": ("qwen3", "llama", "mistral")}


def _is_plain_dense(model: Model) -> bool:
    arch = model.architecture
    return (
        arch.moe is None
        and arch.linear_attention is None
        and arch.mamba is None
        and not arch.sliding_window_layers
    )


def v2_runner(engine: Engine | None, model: Model, drafter: fm.DrafterSpec | None) -> bool:
    """Whether the target runs on vLLM's V2 model runner (config/vllm.py use_v2_model_runner).

    Hybrid and MoE models keep V1 unless a DFlash draft mixing sliding and full layers
    forces V2 (v0.27); plain dense models get V2 by default from v0.25 (#44443), Qwen3 (and
    then Llama and Mistral) earlier.
    """
    mem = engine.memory if engine is not None else None
    if drafter is not None and drafter.kind == "dflash":
        return True if mem is None else mem.dflash_forces_v2 or mem.v2_runner_default == "dense"
    default = mem.v2_runner_default if mem is not None else "none"
    if not _is_plain_dense(model) or default == "none":
        return False
    if default == "dense":
        return True
    return model.family.startswith(DENSE_V2_FAMILIES[default])


def vllm_facts(
    engine: Engine | None, model: Model, drafter: fm.DrafterSpec | None
) -> fm.VllmEngineFacts:
    mem = engine.memory if engine is not None else None
    base = DEFAULT_VLLM_MEMORY
    return fm.VllmEngineFacts(
        non_kv_accounting=(
            mem.non_kv_accounting if mem and mem.non_kv_accounting else base.non_kv_accounting
        ),
        cudagraph_estimate=mem.cudagraph_estimate if mem else base.cudagraph_estimate,
        v2_runner=v2_runner(engine, model, drafter),
        v2_cudagraphs_profiled=mem.v2_cudagraphs_profiled if mem else False,
        kv_connector=bool(mem and mem.kv_connector),
        window_keeps_in_flight=_from_release(engine, (0, 27)),
        boot_check_by_groups=_from_release(engine, (0, 25)),
    )


def _from_release(engine: Engine | None, first: tuple[int, int]) -> bool:
    """Whether the engine's vLLM release is `first` or later (no version: the newest)."""
    version = engine.version if engine is not None else None
    if not version:
        return True
    parts = [int(p) for p in re.findall(r"\d+", version)[:2]]
    return tuple(parts) >= first


def _backend(t: Target) -> str | None:
    """The attention backend that serves the KV: the one named, else the one vLLM picks."""
    if t.engine_entry is None:
        return t.envelope.attention_backend
    env = t.envelope
    return kv_dtype_decision(
        t.engine_entry, t.gpu, env.kv_cache_dtype, env.attention_backend
    ).backend


def default_batched_tokens(t: Target, model: Model, card: int) -> int:
    """vLLM's max_num_batched_tokens when the profile leaves it unset (engine/arg_utils.py
    get_batch_defaults and _set_default_max_num_seqs_and_batched_tokens_args): the OpenAI
    server takes 8192 on cards of 70 GiB or more and 2048 below; without chunked prefill at
    least max_model_len; a prefix-LM multimodal model (Gemma 4) at least its largest media
    item (asked of every medium it supports, whatever the prompt limits); never more than
    max_num_seqs x max_model_len."""
    env = t.envelope
    gpu = t.gpus[card] if t.gpus else t.gpu
    big = gpu.vram.bytes >= VLLM_LARGE_CARD_BYTES
    batched = VLLM_DEFAULT_BATCHED_TOKENS if big else VLLM_SMALL_CARD_BATCHED_TOKENS
    if env.chunked_prefill is False:
        batched = max(batched, env.max_model_len)
    tower = fm.TOWERS.get(model.architecture.vision_encoder or "")
    if tower is not None and not t.profile.serve.language_model_only:
        batched = max(batched, max(tower.item_tokens().values()))
    return min(batched, env.max_num_seqs * env.max_model_len)


def vllm_inputs(registry: Registry, t: Target, lock: Lock | None) -> fm.VllmInputs:
    model = registry.models[t.profile.model]
    env, arch = t.envelope, model.architecture
    shape = model_shape(arch, model.id)
    artifact = model.artifacts[t.weights]
    effects = patch_effects(registry, t.profile)
    card = tightest_card(t, env.tp)
    reserve = env.cudagraph_mem_mib if "v2-cudagraph-memory-reserve" in effects else None
    batched = env.max_num_batched_tokens or default_batched_tokens(t, model, card)
    drafter = drafter_spec(registry, t, shape, lock)
    return fm.VllmInputs(
        shape=shape,
        gpu=gpu_spec(t, card),
        tp=env.tp,
        gpu_memory_utilization=env.gpu_memory_utilization or VLLM_DEFAULT_UTIL,
        weights_bytes=model_weights_bytes(registry, model.id, t.weights, lock),
        unloaded_weights_bytes=unloaded_head_bytes(registry, t, shape, drafter),
        max_model_len=env.max_model_len,
        max_num_seqs=env.max_num_seqs,
        max_num_batched_tokens=batched,
        kv_cache_dtype=env.kv_cache_dtype or "auto",
        model_dtype=arch.dtype
        if env.dtype in (None, "auto")
        else ("float16" if env.dtype == "half" else env.dtype),
        drafter=drafter,
        num_speculative_tokens=t.spec_n,
        kv_cache_memory_bytes=env.kv_cache_memory,
        cudagraph_capture_size=env.cudagraph_max_capture,
        cudagraph_reserve_bytes=reserve * MIB if reserve else None,
        enforce_eager=env.enforce_eager or "--enforce-eager" in t.profile.serve.extra_args,
        mamba_cache_mode=env.mamba_cache_mode
        or ("align" if env.prefix_caching is not False else "none"),
        mamba_ssm_cache_dtype=env.mamba_ssm_cache_dtype or "auto",
        weight_path=weight_path(artifact, t.gpus[card] if t.gpus else t.gpu),
        expert_parallel=env.expert_parallel,
        prefer_padding_sliding_window_groups="prefer-padding-sliding-window-groups" in effects,
        async_scheduling=env.async_scheduling,
        attention_backend=_backend(t),
        vision=vision_profile(t, model),
        engine=vllm_facts(t.engine_entry, model, drafter),
        constants=t.constants,
    )


def _cpu_resident(t: Target, shape: fm.ModelShape, weights: int) -> int:
    """Weights llama.cpp keeps on the host: the routed experts with cpu-experts offload."""
    if t.envelope.offload != "cpu-experts":
        return 0
    return int(weights * fm.routed_expert_share(shape))


def llamacpp_inputs(registry: Registry, t: Target, lock: Lock | None) -> fm.LlamaCppInputs:
    model = registry.models[t.profile.model]
    env, p = t.envelope, t.profile
    cards = 1 if env.split_mode == "none" else env.tp
    mmproj = p.mmproj if t.mmproj else None
    drafter = registry.drafters[p.drafter.id] if p.drafter else None
    shape = model_shape(model.architecture, model.id)
    weights = t.weights_bytes or model_weights_bytes(registry, model.id, t.weights, lock)
    return fm.LlamaCppInputs(
        shape=shape,
        gpus=tuple(gpu_spec(t, i) for i in range(cards)),
        n_ctx=env.max_model_len,
        weights_bytes=weights,
        cache_type_k=env.kv_cache_dtype or "f16",
        cache_type_v=env.kv_cache_dtype_v or env.kv_cache_dtype or "f16",
        n_parallel=env.max_num_seqs,
        n_ubatch=env.ubatch_size or 512,
        flash_attn=env.flash_attn is not False,
        mmproj_bytes=model_weights_bytes(registry, model.id, mmproj, lock) if mmproj else 0,
        mtp_draft=bool(drafter and drafter.builtin and drafter.method == "mtp" and t.spec_n),
        spec_n=t.spec_n,
        backend=t.backend,
        n_gpu_layers=999 if env.gpu_layers in (None, "all") else int(env.gpu_layers),
        tensor_split=tuple(env.tensor_split) or None,
        cpu_resident_bytes=_cpu_resident(t, shape, weights),
        constants=t.constants,
    )


def _flag_int(args: list[str], flag: str) -> int | None:
    """An integer flag the profile passes through extra_args (SGLang's mamba pool size)."""
    for i, word in enumerate(args):
        value = word.partition("=")[2] if word.startswith(flag + "=") else None
        if word == flag and i + 1 < len(args):
            value = args[i + 1]
        if value is not None and value.isdigit():
            return int(value)
    return None


def sglang_inputs(registry: Registry, t: Target, lock: Lock | None) -> fm.SglangInputs:
    model = registry.models[t.profile.model]
    env = t.envelope
    drafter = registry.drafters[t.profile.drafter.id] if t.profile.drafter else None
    # EAGLE keeps one intermediate recurrent state per draft token (num_draft_tokens).
    draft_tokens = t.spec_n + 1 if drafter is not None and t.spec_n else 0
    return fm.SglangInputs(
        shape=model_shape(model.architecture, model.id),
        gpu=gpu_spec(t, tightest_card(t, env.tp)),
        tp=env.tp,
        mem_fraction_static=env.gpu_memory_utilization or SGLANG_DEFAULT_FRACTION,
        weights_bytes=model_weights_bytes(registry, model.id, t.weights, lock),
        context_length=env.max_model_len,
        max_running_requests=env.max_num_seqs,
        kv_cache_dtype=env.kv_cache_dtype or "auto",
        model_dtype=model.architecture.dtype,
        speculative_draft_tokens=draft_tokens,
        mamba_cache_size=_flag_int(t.profile.serve.extra_args, "--max-mamba-cache-size"),
        constants=t.constants,
    )
