"""The physical bound every measured speed is held to: what it rests on, and that every real
figure of the catalogue is within it."""

from __future__ import annotations

import pytest

from profilegen.fit.inputs import model_shape
from profilegen.fit.predict import read_lock_or_none
from profilegen.fit.speed import MARGIN, active_params, impossible_figures, speed_bound
from profilegen.registry import Registry
from tests.support.repo import shared_registry


@pytest.fixture(scope="module")
def registry() -> Registry:
    return shared_registry()


def test_every_measured_speed_of_the_catalogue_is_within_its_bound(registry: Registry) -> None:
    lock = read_lock_or_none(registry)
    past = [
        (p.id, i, f.message())
        for p in registry.concrete_profiles()
        for i, ev in enumerate(p.evidence)
        for f in impossible_figures(registry, p, ev, lock)
    ]
    assert past == []


def test_decode_rests_on_bandwidth_active_bytes_and_the_drafter(registry: Registry) -> None:
    profile = registry.profiles["qwen38-27b-dual-fast"]
    bound = speed_bound(registry, profile, "2x3090-pcie")
    assert bound is not None
    assert bound.bandwidth_gbps == 2 * 936  # both cards read at once under TP 2
    assert bound.tokens_per_pass == 9  # the MTP drafter proposes at most 8, +1 verified
    ideal = bound.bandwidth_gbps * 1e9 * 9 / bound.bytes_per_pass
    assert bound.decode == pytest.approx(ideal * MARGIN)
    undrafted = speed_bound(registry, profile, "2x3090-pcie", spec_n=0)
    assert undrafted is not None and undrafted.tokens_per_pass == 1
    # The KV a pass reads at a long context lowers the ceiling.
    deep = speed_bound(registry, profile, "2x3090-pcie", spec_n=0, context=200_000)
    assert deep is not None and deep.decode is not None and undrafted.decode is not None
    assert deep.kv_bytes > 0 and deep.decode < undrafted.decode


def test_a_moe_token_reads_only_its_experts(registry: Registry) -> None:
    model = registry.models["qwen3.6-35b-a3b"]
    total, active = active_params(model_shape(model.architecture, model.id))
    assert 30e9 < total < 40e9 and 2e9 < active < 4e9  # 35B-A3B


def test_quantised_weights_may_prefill_on_8_bit_tensor_cores(registry: Registry) -> None:
    profile = registry.profiles["llamacpp-gemma-12b-single-q8kxl"]
    one = speed_bound(registry, profile, "1x3090")
    assert one is not None and one.bandwidth_gbps == 936
    assert one.precision == "8-bit"  # llama.cpp multiplies quantised weights on int8 cores
    assert one.tflops == 2 * 142
