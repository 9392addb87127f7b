"""vLLM's max_num_batched_tokens where a profile leaves it unset (engine/arg_utils.py): the
OpenAI server batches 8192 tokens on cards of 70 GiB or more and 2048 below; a Gemma 4 model
with its tower at least its largest media item (a 2,496-token video)."""

from __future__ import annotations

from profilegen.fit.engine_inputs import vllm_inputs
from profilegen.fit.options import FitOptions
from profilegen.fit.predict import retarget
from profilegen.registry import Registry


def _batched(registry: Registry, profile: str, **opts: object) -> int:
    target = retarget(registry, registry.profiles[profile], FitOptions(**opts))  # type: ignore[arg-type]
    return vllm_inputs(registry, target, None).max_num_batched_tokens


def test_a_24_gb_card_batches_2048_tokens(registry: Registry) -> None:
    assert registry.profiles["qwen36-27b-minimal"].envelope.max_num_batched_tokens is None
    assert _batched(registry, "qwen36-27b-minimal") == 2048


def test_a_card_of_70_gib_or_more_batches_8192(registry: Registry) -> None:
    assert _batched(registry, "qwen36-27b-minimal", rig="1xh200") == 8192


def test_a_gemma_4_tower_raises_it_to_one_video(registry: Registry) -> None:
    profile = registry.profiles["gemma-31b-dual"]
    unset = profile.model_copy(
        update={"envelope": profile.envelope.model_copy(update={"max_num_batched_tokens": None})}
    )
    target = retarget(registry, unset, FitOptions())
    assert vllm_inputs(registry, target, None).max_num_batched_tokens == 2496


def test_a_set_value_is_kept(registry: Registry) -> None:
    assert _batched(registry, "gemma-bf16-mtp") == 4096
