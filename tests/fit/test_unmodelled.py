"""Terms a prediction leaves out are named: in `fit`, its JSON and `fit calibration`.

Gemma 4 on vLLM: its vision tower is not the one the constants were fitted with, so a release
whose facts do not say how it profiles that tower leaves its peak out; and an MTP assistant
that reads the target's KV cache has buffers only its own measured boots carry.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from profilegen.fit.inputs import FitError, model_shape
from profilegen.fit.options import FitOptions
from profilegen.fit.predict import fit_profile
from profilegen.fit.unmodelled import fitted_encoders, measured_assistants
from profilegen.registry import Registry

from .conftest import Invoke, with_architecture

GEMMA = "gemma-bf16-mtp"  # Gemma 4 31B on v0.22.0, whose facts state how it profiles the tower
BARE = "gemma-31b-dual"  # the same model on v0.27.1, whose facts say nothing of the tower
ASSISTANT = "gemma-12b-single-int8-mtp"  # the 12B assistant and its one measured boot
QWEN = "qwen-27b-dual-fast"  # Qwen3.6 27B: the tower the constants were fitted with


def _terms(registry: Registry, profile_id: str, **envelope: Any) -> list[str]:
    profile = registry.profiles[profile_id]
    if envelope:
        profile = profile.model_copy(
            update={"envelope": profile.envelope.model_copy(update=envelope)}
        )
    return [u.term for u in fit_profile(registry, profile, FitOptions()).unmodelled]


def test_the_constants_were_fitted_with_the_qwen_tower_only(registry: Registry) -> None:
    assert fitted_encoders(registry) == {"qwen3-vl"}


def test_a_tower_the_engine_facts_describe_is_modelled_not_named(registry: Registry) -> None:
    assert _terms(registry, GEMMA) == []


def test_a_release_without_the_towers_facts_names_it(registry: Registry) -> None:
    assert _terms(registry, BARE) == ["vision encoder profiling"]


def test_a_tower_the_constants_carry_is_not_unmodelled(registry: Registry) -> None:
    assert _terms(registry, QWEN) == []


def _unmeasured(registry: Registry) -> Registry:
    """The registry without the 12B assistant's measured boot."""
    profile = registry.profiles[ASSISTANT]
    bare = profile.model_copy(update={"evidence": []})
    profiles = {**registry.profiles, ASSISTANT: bare}
    return dataclasses.replace(registry, profiles=profiles)


def test_an_assistant_on_a_measured_boot_carries_its_buffers(registry: Registry) -> None:
    measured = measured_assistants(registry)
    assert {"gemma-it-assistant", "gemma-26b-it-assistant", "gemma-12b-it-assistant"} <= measured
    assert _terms(registry, ASSISTANT) == []
    assert _terms(_unmeasured(registry), ASSISTANT) == ["assistant drafting buffers"]


@pytest.mark.parametrize(
    ("limits", "terms"),
    [
        ({"image": 0, "video": 0}, []),
        # vLLM keeps its own limit for a medium the flag leaves out: video is still profiled.
        ({"image": 0}, ["vision encoder profiling"]),
    ],
)
def test_media_limits_of_zero_take_the_encoder_out(
    registry: Registry, limits: dict[str, int], terms: list[str]
) -> None:
    assert _terms(registry, BARE, limit_mm_per_prompt=limits) == terms


def test_a_tower_the_model_does_not_name_is_said_so(registry: Registry) -> None:
    unnamed = with_architecture(registry, "gemma-4-31b", vision_encoder=None)
    result = fit_profile(unnamed, unnamed.profiles[GEMMA], FitOptions())
    assert (
        "a tower the model does not name (architecture.vision_encoder)" in result.unmodelled[0].why
    )


def test_fit_prints_each_term_and_its_remedy(invoke: Invoke, registry: Registry) -> None:
    lines = [line for line in invoke("fit", BARE).stdout.splitlines() if "unmodelled: " in line]
    assert len(lines) == 1
    assert "not for its gemma4 tower" in lines[0]
    # The pinned release accepts --skip-mm-profiling (its facts say so): offered as a way out.
    assert "--skip-mm-profiling in serve.extra_args" in lines[0]
    unmeasured = _unmeasured(registry)
    why = fit_profile(unmeasured, unmeasured.profiles[ASSISTANT], FitOptions()).unmodelled[0].why
    assert "gather its own output layer (the vocabulary by its hidden size)" in why
    assert "no measured boot of it is on record" in why


def test_json_carries_the_terms(invoke: Invoke) -> None:
    import json

    data = json.loads(invoke("fit", BARE, "--format", "json").stdout)
    assert [u["term"] for u in data["unmodelled"]] == ["vision encoder profiling"]
    assert all(u["why"] for u in data["unmodelled"])


def test_a_missing_vocabulary_says_where_it_comes_from(registry: Registry) -> None:
    arch = registry.models["inkling-small"].architecture
    with pytest.raises(FitError) as caught:
        model_shape(arch, "inkling-small")
    assert str(caught.value) == (
        "model inkling-small has no architecture.vocab_size; fit needs it (the embedding, the "
        "output layer and the logits are that wide): set it in registry/models/inkling-small.yaml "
        "from `vocab_size` in the checkpoint's config.json (text_config for a multimodal one) or "
        "the number of `tokenizer.ggml.tokens` in a GGUF artifact's header"
    )
