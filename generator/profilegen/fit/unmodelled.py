"""Memory a prediction knows it leaves out: each term `fit` does not model for a profile,
named with what it depends on and how a profile takes it out of the engine's hands.

A prediction that is off for a reason `fit` can name says so (in `fit`, in its JSON and in
`fit calibration`), instead of being quietly wrong.
"""

from __future__ import annotations

from ..families import fit_model
from ..model.facts import EngineFacts
from ..registry import Registry
from ..units import GIB
from .inputs import Target
from .options import Unmodelled

SKIP_MM_PROFILING = "--skip-mm-profiling"
ENCODED_MEDIA = ("image", "video")  # what a vision tower encodes


def _profiles_the_encoder(t: Target) -> bool:
    """Whether vLLM's profile run passes dummy media through the model's encoder: a vision
    model served with media allowed, and no flag that skips the encoder's profiling."""
    serve = t.profile.serve
    if serve.language_model_only:
        return False
    # A medium the limits leave out keeps vLLM's own limit: only zeros switch it off.
    limits = t.envelope.limit_mm_per_prompt or {}
    if all(limits.get(medium) == 0 for medium in ENCODED_MEDIA):
        return False
    return not any(
        word == SKIP_MM_PROFILING or word.startswith(f"{SKIP_MM_PROFILING}=")
        for word in serve.extra_args
    )


def _remedy(facts: EngineFacts | None) -> str:
    ways = [
        "envelope.limit_mm_per_prompt {image: 0, video: 0} or serve.language_model_only (no media)"
    ]
    if facts is not None and SKIP_MM_PROFILING in facts.flags:
        ways.append(f"{SKIP_MM_PROFILING} in serve.extra_args (media kept, their peak unsized)")
    return "; ".join(ways)


def fitted_encoders(registry: Registry) -> frozenset[str]:
    """The vision towers of the boots vLLM's constants were fitted to: their encoder's
    profiling peak is inside those constants."""
    found = set()
    for profile in registry.concrete_profiles():
        if fit_model(registry.engines[profile.engine].kind) != "pool":
            continue
        if any(ev.fitted for ev in profile.evidence):
            encoder = registry.models[profile.model].architecture.vision_encoder
            found.update([encoder] if encoder else [])
    return frozenset(found)


def vllm_unmodelled(registry: Registry, t: Target) -> list[Unmodelled]:
    """The terms a vLLM prediction of `t` leaves out."""
    return [*_encoder(registry, t), *_assistant(registry, t)]


def _assistant(registry: Registry, t: Target) -> list[Unmodelled]:
    """A draft model that keeps no KV of its own (it reads the target's): its weights are
    counted, its drafting path's buffers are not."""
    if t.profile.drafter is None or t.spec_n == 0:
        return []
    drafter = registry.drafters[t.profile.drafter.id]
    if drafter.method != "draft_model" or drafter.shape is None or drafter.shape.kv_layers:
        return []
    arch = registry.models[t.profile.model].architecture
    head = (arch.vocab_size or 0) * arch.hidden_size * 2
    why = (
        f"the buffers of {drafter.id}'s drafting path: it reads the target's KV cache, and "
        "its proposer may gather the whole output layer on every card "
        f"({head / GIB:.2f} GiB at 16 bits) and capture graphs of its own; fit counts the "
        "assistant's weights only, so the predicted pool is high by those buffers"
    )
    return [Unmodelled("assistant drafting buffers", why)]


def _encoder(registry: Registry, t: Target) -> list[Unmodelled]:
    model = registry.models[t.profile.model]
    arch = model.architecture
    if not arch.vision or not _profiles_the_encoder(t):
        return []
    known = registry.derived("fitted_encoders", fitted_encoders)
    if arch.vision_encoder in known:
        return []
    tower = (
        f"its {arch.vision_encoder} tower"
        if arch.vision_encoder
        else "a tower the model does not name (architecture.vision_encoder)"
    )
    measured = ", ".join(sorted(known)) or "none"
    engine_id = t.engine_entry.id if t.engine_entry is not None else t.profile.engine
    why = (
        "the vision encoder's profile-run peak: before sizing the KV pool vLLM runs "
        f"{model.id}'s encoder on a batch of dummy media (as many images or video frames as "
        "its encoder budget holds); fit's constants carry that peak only for the towers they "
        f"were fitted with ({measured}), not for {tower}, so the predicted pool is high by "
        "the difference. "
        "Without it: " + _remedy(registry.facts.get(engine_id))
    )
    return [Unmodelled("vision encoder profiling", why)]
