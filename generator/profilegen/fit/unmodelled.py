"""Memory a prediction knows it leaves out: each term `fit` does not model for a profile,
named with what it depends on and how a profile takes it out of the engine's hands.

A prediction that is off for a reason `fit` can name says so (in `fit`, in its JSON and in
`fit calibration`), instead of being quietly wrong.
"""

from __future__ import annotations

from ..families import fit_model
from ..model.facts import EngineFacts
from ..registry import Registry
from .inputs import Target
from .media import SKIP_MM_PROFILING, profiles_the_encoder, vision_profile
from .options import Unmodelled


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


def measured_assistants(registry: Registry) -> frozenset[str]:
    """Draft models that ran drafting in a counted boot whose pool calibration judges: their
    drafting path's buffers are inside what those boots measured."""
    found = set()
    for profile in registry.concrete_profiles():
        if profile.drafter is None:
            continue
        for ev in profile.evidence:
            spec_on = ev.settings.spec_n != 0
            if ev.calibration and ev.measured.kv_pool_tokens and spec_on:
                found.add(profile.drafter.id)
    return frozenset(found)


def _assistant(registry: Registry, t: Target) -> list[Unmodelled]:
    """A draft model that keeps no KV of its own (it reads the target's): its weights are
    counted, its drafting path's buffers only where a measured boot of it carries them."""
    if t.profile.drafter is None or t.spec_n == 0:
        return []
    drafter = registry.drafters[t.profile.drafter.id]
    if drafter.method != "draft_model" or drafter.shape is None or drafter.shape.kv_layers:
        return []
    if drafter.id in registry.derived("measured_assistants", measured_assistants):
        return []
    why = (
        f"the buffers of {drafter.id}'s drafting path: it reads the target's KV cache, and "
        "its proposer may gather its own output layer (the vocabulary by its hidden size) on "
        "every card and capture graphs of its own; no measured boot of it is on record, and "
        "fit counts the assistant's weights only, so the predicted pool may be high by "
        "those buffers"
    )
    return [Unmodelled("assistant drafting buffers", why)]


def _encoder(registry: Registry, t: Target) -> list[Unmodelled]:
    model = registry.models[t.profile.model]
    arch = model.architecture
    if not arch.vision or not profiles_the_encoder(t):
        return []
    known = registry.derived("fitted_encoders", fitted_encoders)
    if arch.vision_encoder in known:
        return []
    if vision_profile(t, model) is not None:
        return []  # fit/formulas/vision.py sizes it
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
