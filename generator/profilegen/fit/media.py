"""A vision model's tower in a vLLM boot: whether it is loaded, whether the profile run
encodes media through it, and how this engine build does that (`VisionProfile`)."""

from __future__ import annotations

from ..model.engine import VisionEncoderProfile
from ..model.model import Model
from ..units import GIB
from . import formulas as fm
from .inputs import Target

SKIP_MM_PROFILING = "--skip-mm-profiling"
ENCODED_MEDIA = ("image", "video")  # what a vision tower encodes


def tower_loaded(t: Target) -> bool:
    """vLLM skips the tower (`_mark_tower_model`) when every medium it encodes is limited
    to zero per prompt, or when it serves the language model only."""
    if t.profile.serve.language_model_only:
        return False
    # A medium the limits leave out keeps vLLM's own limit: only zeros switch it off.
    limits = t.envelope.limit_mm_per_prompt or {}
    return not all(limits.get(medium) == 0 for medium in ENCODED_MEDIA)


def profiles_the_encoder(t: Target) -> bool:
    """Whether vLLM's profile run passes dummy media through the model's encoder: a vision
    model served with media allowed, and no flag that skips the encoder's profiling."""
    return tower_loaded(t) and not any(
        word == SKIP_MM_PROFILING or word.startswith(f"{SKIP_MM_PROFILING}=")
        for word in t.profile.serve.extra_args
    )


def modelled_facts(t: Target, model: Model) -> VisionEncoderProfile | None:
    """The engine's facts for the model's tower, as the boot ran them: a boot measured
    before the batching reached vLLM's main branch encoded one item per call."""
    mem = t.engine_entry.memory if t.engine_entry is not None else None
    encoder = model.architecture.vision_encoder
    found = mem.vision_encoders.get(encoder) if mem is not None and encoder else None
    if found is None or found.since is None or t.booted_on is None:
        return found
    if t.booted_on < found.since:  # ISO dates order as text
        return found.model_copy(update={"batching": "per-item", "since": None})
    return found


def vision_profile(t: Target, model: Model) -> fm.VisionProfile | None:
    """The tower as fit models it, or None (no tower, not loaded, or not modelled here)."""
    arch = model.architecture
    tower = fm.TOWERS.get(arch.vision_encoder or "")
    facts = modelled_facts(t, model)
    if tower is None or facts is None or arch.vision_tower_params is None:
        return None
    if not tower_loaded(t):
        return None
    limits = t.envelope.limit_mm_per_prompt or {}
    batching = facts.batching if profiles_the_encoder(t) else "none"
    return fm.VisionProfile(
        tower=tower,
        batching=batching,
        position_lookup=facts.position_lookup,
        tower_bytes=arch.vision_tower_params * 2,
        limits=tuple(sorted((m, n) for m, n in limits.items() if m in ENCODED_MEDIA)),
    )


def vision_notes(inputs: fm.VllmInputs, budget: fm.VllmBudget) -> list[str]:
    """What the tower costs this boot, as fit charged it."""
    v = inputs.vision
    if v is None:
        return []
    whole = fm.replicated_bytes(v, inputs.tp)
    notes = [
        f"the vision tower's {whole / GIB:.2f} GiB is held whole on each of the {inputs.tp} "
        "GPUs (vLLM does not shard it); the rest of the weights are split over TP"
    ] if whole else []  # fmt: skip
    batch = fm.encoder_batch(inputs)
    if batch is None or v.batching == "none":
        return notes
    free, total = fm.free_at_encoder(inputs, budget.weights + budget.drafter), inputs.gpu.cuda_total
    peak = fm.encoder_peak_bytes(v, batch, free, total)
    lm = fm.activation_peak_bytes(inputs.shape, inputs.tp, inputs.max_num_batched_tokens)
    unit = "frames" if batch.modality == "video" else "images"
    plural = "" if batch.items == 1 else "s"
    lookup = "one-hot" if v.position_lookup == "one-hot" else "embedding"
    side = "above" if peak > lm else "below"
    notes.append(
        f"before sizing the pool vLLM encodes {batch.items} {batch.modality}{plural} "
        f"({batch.units} {unit} of {batch.patches} patches, "
        f"{fm.units_per_call(v, batch, free, total)} a call, {lookup} position lookup): a "
        f"{peak / GIB:.2f} GiB peak, {side} the language model's {lm / GIB:.2f} GiB"
    )
    return notes
