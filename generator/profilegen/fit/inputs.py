"""Registry facts as fit-math inputs: shapes, sizes, drafters, patch effects, GPUs."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProfilegenError
from ..hub.artifacts import SIZE_TOLERANCE
from ..hub.lock import Lock
from ..model import Gpu, Profile, Rig
from ..model.model import Architecture, Artifact
from ..model.profile import Envelope
from ..registry import Registry
from . import formulas as fm

MIB = 1 << 20
# vLLM's own defaults for settings a profile may leave out (online serving).
VLLM_DEFAULT_UTIL = 0.9
VLLM_DEFAULT_BATCHED_TOKENS = 8192
# vLLM runs FP8 weights on FP8 tensor cores from compute capability 8.9 (Ada) and through
# Marlin's weight-only path below it, which costs more VRAM than the file.
FP8_NATIVE_SM = (8, 9)
# The weight dtype a format implies; compressed-tensors (and GGUF) must say it explicitly.
FORMAT_DTYPES = {
    "fp8": "fp8",
    "nvfp4": "nvfp4",
    "awq": "int4",
    "gptq": "int4",
    "auto-round": "int4",
    "safetensors": "bf16",
}
# Bits a stored weight costs with its scales: INT4 group 128 (bf16 scale + zero point)
# ~4.25, NVFP4 one fp8 scale per 16 values.
WEIGHT_BITS = {"bf16": 16.0, "fp16": 16.0, "fp8": 8.0, "int8": 8.0, "int4": 4.25, "nvfp4": 4.5}
DRAFTER_KINDS = {
    "mtp": "mtp",
    "dflash": "dflash",
    "eagle": "eagle",
    "eagle3": "eagle",
    "draft_model": "draft_model",
}  # ngram drafts from the prompt: no model


class FitError(ProfilegenError):
    """The registry lacks a fact the fit math needs."""


@dataclass(frozen=True)
class Target:
    """A profile as it is fitted: on a rig, with the overrides applied to its envelope."""

    profile: Profile
    rig: Rig
    gpu: Gpu
    engine: str
    envelope: Envelope
    weights: str
    spec_n: int
    tp_capped_from: int | None
    within_policy: bool
    notes: tuple[str, ...]


def artifact_bytes(artifact: Artifact, key: str, lock: Lock | None) -> int:
    """The resolved total size from the lock file when it still describes the artifact.

    A total far from the declared size is a lock that `check` rejects: it is not used.
    """
    entry = lock.artifacts.get(key) if lock else None
    declared = artifact.size.bytes if artifact.size is not None else None
    if (
        entry
        and entry.get("resolved")
        and entry.get("repo") == artifact.repo
        and entry.get("revision") == artifact.revision
        and isinstance(entry.get("total_size"), int)
        and (declared is None or abs(entry["total_size"] - declared) <= SIZE_TOLERANCE * declared)
    ):
        return int(entry["total_size"])
    if declared is None:
        raise FitError(
            f"the size of {key} is unknown (run `profilegen lock` to read it from the Hub)"
        )
    return declared


def model_shape(arch: Architecture, model_id: str) -> fm.ModelShape:
    if arch.intermediate_size is None:
        raise FitError(f"model {model_id} has no architecture.intermediate_size; fit needs it")
    if arch.vocab_size is None:
        raise FitError(f"model {model_id} has no architecture.vocab_size; fit needs it")
    lin = arch.linear_attention
    return fm.ModelShape(
        num_layers=arch.num_layers,
        num_kv_layers=arch.full_attention_layers,
        num_attention_heads=arch.num_attention_heads,
        num_kv_heads=arch.num_kv_heads,
        head_dim=arch.head_dim,
        hidden_size=arch.hidden_size,
        intermediate_size=arch.intermediate_size,
        vocab_size=arch.vocab_size,
        linear_num_key_heads=lin.num_key_heads if lin else 0,
        linear_num_value_heads=lin.num_value_heads if lin else 0,
        linear_key_head_dim=lin.key_head_dim if lin else 0,
        linear_value_head_dim=lin.value_head_dim if lin else 0,
        linear_conv_kernel=lin.conv_kernel if lin else 0,
        mtp_layers=arch.mtp_layers,
        attn_output_gate=arch.attn_output_gate,
    )


def _dtype(artifact: Artifact) -> str:
    # An unknown dtype counts as 16-bit: the safe side for the pool, never an FP8 discount.
    return artifact.weight_dtype or FORMAT_DTYPES.get(artifact.format, "bf16")


def _weight_format(artifact: Artifact, gpu: Gpu) -> str:
    dtype = _dtype(artifact)
    sm = tuple(int(x) for x in gpu.sm.split("."))
    return "fp8_marlin" if dtype == "fp8" and sm < FP8_NATIVE_SM else dtype


def drafter_spec(
    registry: Registry, t: Target, shape: fm.ModelShape, lock: Lock | None
) -> fm.DrafterSpec | None:
    if t.profile.drafter is None:
        return None
    d = registry.drafters[t.profile.drafter.id]
    kind = DRAFTER_KINDS.get(d.method)
    if kind is None:
        return None
    if d.artifact is not None:
        weights = artifact_bytes(d.artifact, d.id, lock)
        factor = fm.WEIGHT_VRAM_FACTORS[_weight_format(d.artifact, t.gpu)]
    else:
        # A built-in head lives inside the target artifact at the target's precision.
        target = registry.models[t.profile.model].artifacts[t.weights]
        params = fm.mtp_head_params(shape) if d.method == "mtp" else 0
        weights, factor = int(params * WEIGHT_BITS[_dtype(target)] / 8), 1.0
    s = d.shape
    return fm.DrafterSpec(
        kind=kind,
        weights_bytes=weights,
        embedded_in_target=d.builtin,
        num_kv_layers=s.kv_layers if s else 1,
        num_kv_heads=s.num_kv_heads if s else None,
        head_dim=s.head_dim if s else None,
        sliding_window=s.sliding_window if s else None,
        hidden_taps=s.hidden_taps if s else 1,
        weight_vram_factor=factor,
    )


def patch_effects(registry: Registry, profile: Profile) -> set[str]:
    """Effects of the patches that are switched on in this profile."""
    out: set[str] = set()
    for pid in profile.patches:
        patch = registry.patches[pid]
        act = patch.activation
        if act is None or profile.switches.get(act.env, act.default):
            out.update(patch.effects)
    return out


def _gpu_spec(t: Target, card: int) -> fm.GpuSpec:
    rig = t.rig
    desktop = rig.desktop_reserve.bytes if rig.desktop_reserve and rig.desktop_gpu == card else 0
    return fm.GpuSpec(vram_bytes=t.gpu.vram.bytes, desktop_reservation_bytes=desktop)


def vllm_inputs(registry: Registry, t: Target, lock: Lock | None) -> fm.VllmInputs:
    model = registry.models[t.profile.model]
    env, arch = t.envelope, model.architecture
    shape = model_shape(arch, model.id)
    artifact = model.artifacts[t.weights]
    effects = patch_effects(registry, t.profile)
    # Every rank sizes the same pool; the card that drives a desktop is the tight one.
    card = t.rig.desktop_gpu if t.rig.desktop_gpu is not None and t.rig.desktop_gpu < env.tp else 0
    reserve = env.cudagraph_mem_mib if "v2-cudagraph-memory-reserve" in effects else None
    batched = env.max_num_batched_tokens or (
        VLLM_DEFAULT_BATCHED_TOKENS if env.chunked_prefill is not False else env.max_model_len
    )
    return fm.VllmInputs(
        shape=shape,
        gpu=_gpu_spec(t, card),
        tp=env.tp,
        gpu_memory_utilization=env.gpu_memory_utilization or VLLM_DEFAULT_UTIL,
        weights_bytes=artifact_bytes(artifact, f"{model.id}/{t.weights}", lock),
        max_model_len=env.max_model_len,
        max_num_seqs=env.max_num_seqs,
        max_num_batched_tokens=batched,
        kv_cache_dtype=env.kv_cache_dtype or "auto",
        model_dtype=arch.dtype
        if env.dtype in (None, "auto")
        else ("float16" if env.dtype == "half" else env.dtype),
        drafter=drafter_spec(registry, t, shape, lock),
        num_speculative_tokens=t.spec_n,
        kv_cache_memory_bytes=env.kv_cache_memory,
        cudagraph_capture_size=env.cudagraph_max_capture,
        cudagraph_reserve_bytes=reserve * MIB if reserve else None,
        enforce_eager="--enforce-eager" in t.profile.serve.extra_args,
        mamba_cache_mode=env.mamba_cache_mode
        or ("align" if env.prefix_caching is not False else "none"),
        mamba_ssm_cache_dtype=env.mamba_ssm_cache_dtype or "auto",
        weight_format=_weight_format(artifact, t.gpu),
        prefer_padding_sliding_window_groups="prefer-padding-sliding-window-groups" in effects,
    )


def llamacpp_inputs(registry: Registry, t: Target, lock: Lock | None) -> fm.LlamaCppInputs:
    model = registry.models[t.profile.model]
    env, p = t.envelope, t.profile
    cards = 1 if env.split_mode == "none" else env.tp
    mmproj = model.artifacts[p.mmproj] if p.mmproj else None
    drafter = registry.drafters[p.drafter.id] if p.drafter else None
    return fm.LlamaCppInputs(
        shape=model_shape(model.architecture, model.id),
        gpus=tuple(_gpu_spec(t, i) for i in range(cards)),
        n_ctx=env.max_model_len,
        weights_bytes=artifact_bytes(model.artifacts[t.weights], f"{model.id}/{t.weights}", lock),
        cache_type_k=env.kv_cache_dtype or "f16",
        cache_type_v=env.kv_cache_dtype_v or env.kv_cache_dtype or "f16",
        n_parallel=env.max_num_seqs,
        n_ubatch=env.ubatch_size or 512,
        flash_attn=env.flash_attn is not False,
        mmproj_bytes=artifact_bytes(mmproj, f"{model.id}/{p.mmproj}", lock) if mmproj else 0,
        mtp_draft=bool(drafter and drafter.builtin and drafter.method == "mtp" and t.spec_n),
        n_gpu_layers=999 if env.gpu_layers in (None, "all") else int(env.gpu_layers),
        tensor_split=tuple(env.tensor_split) or None,
    )
