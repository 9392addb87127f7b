"""Registry facts as fit-math inputs: shapes, sizes, drafters, patch effects, GPUs, engines."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Location, ProfilegenError
from ..lockfile.artifacts import SIZE_TOLERANCE
from ..lockfile.lock import Lock
from ..model import Engine, Gpu, Profile, Rig
from ..model.model import Architecture, Artifact
from ..model.profile import Envelope
from ..registry import Registry
from ..units import GIB
from . import formulas as fm

# vLLM's own defaults for settings a profile may leave out (online serving).
VLLM_DEFAULT_UTIL = 0.9
VLLM_DEFAULT_BATCHED_TOKENS = 8192  # the OpenAI server's default on cards of 70 GiB or more
VLLM_SMALL_CARD_BATCHED_TOKENS = 2048  # ... and below them
VLLM_LARGE_CARD_BYTES = 70 * GIB
SGLANG_DEFAULT_FRACTION = 0.88
# vLLM runs FP8 weights on FP8 tensor cores from compute capability 8.9 (Ada) and FP4 ones
# from 10.0 (Blackwell); below that both go through Marlin's weight-only path.
FP8_NATIVE_SM = (8, 9)
FP4_NATIVE_SM = (10, 0)
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
# vLLM facts for an engine entry that carries no `memory:` (the newest accounting).
DEFAULT_VLLM_MEMORY = fm.VllmEngineFacts()


class FitError(ProfilegenError):
    """The registry lacks a fact the fit math needs."""


@dataclass(frozen=True)
class Target:
    """A profile as it is fitted: on a rig and engine, with the overrides applied."""

    profile: Profile
    rig: Rig
    gpu: Gpu  # the tightest card
    engine: str  # the engine kind: vllm | llama.cpp | sglang
    envelope: Envelope
    weights: str
    spec_n: int
    tp_capped_from: int | None
    within_policy: bool
    notes: tuple[str, ...]
    engine_entry: Engine | None = None  # the registry engine it runs on
    gpus: tuple[Gpu, ...] = ()  # every card, in order (mixed rigs)
    constants: fm.Constants = fm.DEFAULT_CONSTANTS
    weights_bytes: int | None = None  # what-if: the weights' size instead of the artifact's
    backend: str = "cuda"  # llama.cpp: where its graph runs
    mmproj: bool = True  # the profile's vision projector is loaded
    # Why the container refuses to boot at these settings (its guards: the KV dtype its
    # attention backend takes, the rig's utilization cap): fit never says FITS then.
    refused: tuple[str, ...] = ()
    # The day a measured boot ran (a record's date): what an engine build did then.
    booted_on: str | None = None


def _locked_total(artifact: Artifact, key: str, lock: Lock | None) -> int | None:
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
    return None


def artifact_bytes(
    artifact: Artifact, key: str, lock: Lock | None, where: Location | None = None
) -> int:
    """The lock's resolved size, else the declared one; `where` (the artifact's place in the
    registry) names the file to fix when neither is known."""
    locked = _locked_total(artifact, key, lock)
    if locked is not None:
        return locked
    if artifact.size is None:
        raise FitError(
            f"{f'{where}: ' if where else ''}the size of {key} is unknown, so fit cannot size "
            "its weights (run `profilegen lock` online to read it from the Hub, or state its "
            "size there)"
        )
    return artifact.size.bytes


def model_weights_bytes(registry: Registry, model_id: str, variant: str, lock: Lock | None) -> int:
    """The bytes of a model's artifact, as `artifact_bytes` finds them."""
    artifact = registry.models[model_id].artifacts[variant]
    where = registry.where("models", model_id, ("artifacts", variant))
    return artifact_bytes(artifact, f"{model_id}/{variant}", lock, where)


def weights_estimate(
    registry: Registry, model_id: str, variant: str, lock: Lock | None
) -> str | None:
    """A note when the artifact's size fit uses is an estimate (`model add` from a folder
    without the weights), not a size read; None when it is read or the lock resolves it."""
    model = registry.models[model_id]
    origin = model.provenance.facts.get(f"artifacts.{variant}.size")
    estimate = getattr(origin, "estimate", None)
    if estimate is None or _locked_total(model.artifacts[variant], f"{model_id}/{variant}", lock):
        return None
    return (
        f"the size of {model_id}/{variant} is an estimate ({estimate}); `profilegen lock` "
        "online reads the real one"
    )


def _ffn(arch: Architecture, model_id: str) -> int:
    if arch.intermediate_size is not None:
        return arch.intermediate_size
    moe = arch.moe
    if moe is not None and moe.moe_intermediate_size is not None:
        return moe.moe_intermediate_size * moe.experts_per_token
    raise FitError(f"model {model_id} has no architecture.intermediate_size; fit needs it")


def _linear_fields(arch: Architecture) -> dict[str, object]:
    lin, mamba = arch.linear_attention, arch.mamba
    out: dict[str, object] = {}
    if lin is not None:
        out.update(
            linear_num_key_heads=lin.num_key_heads,
            linear_num_value_heads=lin.num_value_heads,
            linear_key_head_dim=lin.key_head_dim,
            linear_value_head_dim=lin.value_head_dim,
            linear_conv_kernel=lin.conv_kernel,
            ssm_state_dtype=lin.state_dtype,
        )
    if mamba is not None:
        out.update(
            mamba2_layers=mamba.layers,
            mamba2_heads=mamba.num_heads,
            mamba2_head_dim=mamba.head_dim,
            mamba2_state=mamba.state_size,
            mamba2_groups=mamba.n_groups,
            mamba2_conv_kernel=mamba.conv_kernel,
            ssm_state_dtype=mamba.state_dtype,
        )
    return out


def _moe_fields(arch: Architecture) -> dict[str, object]:
    moe = arch.moe
    if moe is None:
        return {}
    shared = (moe.shared_intermediate_size or moe.moe_intermediate_size or 0) * moe.shared_experts
    return {
        "moe_experts": moe.num_experts,
        "moe_experts_per_token": moe.experts_per_token,
        "moe_intermediate_size": moe.moe_intermediate_size or 0,
        "moe_shared_intermediate_size": shared,
        "moe_layers": moe.layers or arch.num_layers,
    }


def model_shape(arch: Architecture, model_id: str) -> fm.ModelShape:
    if arch.vocab_size is None:
        raise FitError(
            f"model {model_id} has no architecture.vocab_size; fit needs it (the embedding, "
            "the output layer and the logits are that wide): set it in "
            f"registry/models/{model_id}.yaml from `vocab_size` in the checkpoint's config.json "
            "(text_config for a multimodal one) or the number of `tokenizer.ggml.tokens` in a "
            "GGUF artifact's header"
        )
    interval = None
    if arch.linear_attention is not None and arch.full_attention_layers:
        interval = arch.num_layers // arch.full_attention_layers
    return fm.ModelShape(
        num_layers=arch.num_layers,
        num_kv_layers=arch.full_attention_layers,
        num_attention_heads=arch.num_attention_heads,
        num_kv_heads=arch.num_kv_heads,
        head_dim=arch.head_dim,
        hidden_size=arch.hidden_size,
        intermediate_size=_ffn(arch, model_id),
        vocab_size=arch.vocab_size,
        full_attention_interval=interval,
        mtp_layers=arch.mtp_layers,
        attn_output_gate=arch.attn_output_gate,
        sliding_layers=arch.sliding_window_layers,
        sliding_window=arch.sliding_window or 0,
        sliding_kv_heads=arch.sliding_kv_heads or 0,
        sliding_head_dim=arch.sliding_head_dim or 0,
        kv_shared_layers=arch.kv_shared_layers,
        multimodal=arch.vision,
        diffusion_canvas=arch.diffusion_canvas or 0,
        tied_embeddings=arch.tied_embeddings,
        **_linear_fields(arch),  # type: ignore[arg-type]
        **_moe_fields(arch),  # type: ignore[arg-type]
    )


def weight_dtype(artifact: Artifact) -> str:
    # An unknown dtype counts as 16-bit: the safe side for the pool, never an FP8 discount.
    return artifact.weight_dtype or FORMAT_DTYPES.get(artifact.format, "bf16")


def weight_path(artifact: Artifact, gpu: Gpu) -> str:
    """How vLLM serves the weights on this GPU: Marlin's repack paths, or native kernels."""
    dtype = weight_dtype(artifact)
    sm = tuple(int(x) for x in gpu.sm.split("."))
    if dtype == "int4" or (dtype == "nvfp4" and sm < FP4_NATIVE_SM):
        return "marlin4"
    if dtype == "fp8" and sm < FP8_NATIVE_SM:
        return "marlin-fp8"
    return "native"


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
        weights = artifact_bytes(
            d.artifact, d.id, lock, registry.where("drafters", d.id, ("artifact",))
        )
        factor = fm.WEIGHT_VRAM_FACTORS[weight_path(d.artifact, t.gpu)]
    else:
        # A built-in head lives inside the target artifact at the target's precision.
        target = registry.models[t.profile.model].artifacts[t.weights]
        params = fm.mtp_head_params(shape) if d.method == "mtp" else 0
        weights, factor = int(params * WEIGHT_BITS[weight_dtype(target)] / 8), 1.0
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


def unloaded_head_bytes(
    registry: Registry, t: Target, shape: fm.ModelShape, drafter: fm.DrafterSpec | None
) -> int:
    """Bytes of the target artifact's built-in MTP head that the engine never loads.

    vLLM's target models skip `mtp.*` weights; only a built-in MTP drafter loads them, as
    its own model (counted as the drafter, whether switched on or not).
    """
    if not shape.mtp_layers or (drafter is not None and drafter.embedded_in_target):
        return 0
    target = registry.models[t.profile.model].artifacts[t.weights]
    return int(fm.mtp_head_params(shape) * WEIGHT_BITS[weight_dtype(target)] / 8)


def patch_effects(registry: Registry, profile: Profile) -> set[str]:
    """Effects of the patches that are switched on in this profile."""
    out: set[str] = set()
    for pid in profile.patches:
        patch = registry.patches[pid]
        act = patch.activation
        if act is None or profile.switches.get(act.env, act.default):
            out.update(patch.effects)
    return out


def gpu_spec(t: Target, card: int) -> fm.GpuSpec:
    rig = t.rig
    gpu = t.gpus[card] if t.gpus else t.gpu
    desktop = rig.desktop_reserve.bytes if rig.desktop_reserve and rig.desktop_gpu == card else 0
    return fm.GpuSpec(vram_bytes=gpu.vram.bytes, desktop_reservation_bytes=desktop)


def tightest_card(t: Target, cards: int) -> int:
    """The card whose memory binds: every rank sizes the same pool, the smallest one wins."""
    specs = [gpu_spec(t, i) for i in range(cards)]
    return min(range(cards), key=lambda i: specs[i].cuda_total - specs[i].desktop_reservation_bytes)
