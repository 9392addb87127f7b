"""vLLM's pool from the release's own code: the real vLLM 0.27.1 (CPU build) sizes every
vLLM profile's KV cache from specs built out of the registry's model facts.

The environment is the one `releases/vllm_env.py` keeps per machine; a run without it
builds it (minutes, once). The hand formulas that `check` uses offline are held here to
vLLM's own answers on every profile of that release.
"""

from __future__ import annotations

import json

import pytest

from profilegen.facts.kv_pool import VllmPoolSizer
from profilegen.families import fit_model
from profilegen.fit import formulas as fm
from profilegen.fit.engine_inputs import vllm_inputs
from profilegen.fit.predict import FitOptions, read_lock_or_none, retarget
from profilegen.registry import Registry
from profilegen.releases.vllm_env import VERSION, ensure_env

from .conftest import MTP, Invoke

# Gemma 4 12B's per-GPU layout: 40 sliding layers of 8 x 256 (window 1024) and 8 global
# layers of 1 x 512, bf16, 262,144 tokens, asynchronous scheduling (two batches in flight).
GEMMA_12B = {
    "layers": [
        {"kind": "full", "count": 8, "num_kv_heads": 1, "head_size": 512},
        {"kind": "sliding", "count": 40, "num_kv_heads": 8, "head_size": 256,
         "sliding_window": 1024},
    ],
    "tp": 1, "cache_dtype": "auto", "model_dtype": "bfloat16", "mamba_cache_dtype": "auto",
    "mamba_ssm_cache_dtype": "float32", "mamba_cache_mode": "none",
    "num_speculative_tokens": 0, "max_model_len": 262144, "max_num_batched_tokens": 8192,
    "max_num_seqs": 1, "async_scheduling": True, "prefix_caching": True,
    "kernel_block_size": 16, "attention_backend": "FLASH_ATTN",
}  # fmt: skip


@pytest.fixture(scope="module")
def sizer() -> VllmPoolSizer:
    env = ensure_env(progress=lambda msg: print(msg, flush=True))
    return VllmPoolSizer(env.python, VERSION)


def test_vllm_sizes_a_hybrid_sliding_window_pool(sizer: VllmPoolSizer) -> None:
    big = sizer({**GEMMA_12B, "available_memory": 12 * 2**30})
    assert big is not None and big["boots"] is True, big
    assert big["by"] == "vLLM 0.27.1's get_kv_cache_configs"
    # Two groups of 8 (the global layers, and the sliding ones in five groups of 8 slots).
    assert big["groups"] == [8, 8, 8, 8, 8, 8]
    assert big["tokens"] == int(big["concurrency"] * 262144)
    small = sizer({**GEMMA_12B, "available_memory": 6 * 2**30})
    assert small is not None and small["boots"] is False
    assert small["refusal"].startswith(
        "To serve at least one request with the model's max seq len (262144)"
    )
    assert 0 < small["longest"] < 262144 and small["tokens"] > 0


def _profiles_on(registry: Registry, version: str) -> list[tuple[str, fm.VllmInputs]]:
    lock = read_lock_or_none(registry)
    out = []
    for p in registry.concrete_profiles():
        engine = registry.engines[p.engine]
        if fit_model(engine.kind) != "pool" or engine.version != version:
            continue
        inputs = vllm_inputs(registry, retarget(registry, p, FitOptions()), lock)
        if not inputs.prefer_padding_sliding_window_groups:
            out.append((p.id, inputs))
    return out


def test_the_hand_formulas_agree_with_vllm_on_every_profile_of_its_release(
    registry: Registry, sizer: VllmPoolSizer
) -> None:
    profiles = _profiles_on(registry, VERSION)
    assert len(profiles) >= 15
    sizer.collecting = True
    for _pid, inputs in profiles:
        fm.predict_vllm(inputs, sizer)
    sizer.collecting = False
    sizer.answer_pending()
    apart = []
    for pid, inputs in profiles:
        hand, own = fm.predict_vllm(inputs), fm.predict_vllm(inputs, sizer)
        assert own.pool_by == "vLLM 0.27.1's get_kv_cache_configs", own.pool_by
        if hand.boots != own.boots or abs(hand.kv_pool_tokens - own.kv_pool_tokens) > max(
            16, 0.005 * own.kv_pool_tokens
        ):
            apart.append(
                f"{pid}: hand {hand.kv_pool_tokens} {hand.boots}, vLLM {own.kv_pool_tokens} {own.boots}"
            )
    assert not apart, "\n".join(apart)


def test_fit_says_which_code_sized_the_pool(invoke: Invoke, sizer: VllmPoolSizer) -> None:
    run = invoke("fit", MTP, "--format", "json")
    data = json.loads(run.stdout)
    assert data["pool_by"] == "vLLM 0.27.1's get_kv_cache_configs"
    # A release whose code is not at hand: the hand formulas, and why.
    older = json.loads(invoke("fit", MTP, "--engine", "vllm-v0.25.1", "--format", "json").stdout)
    assert older["pool_by"] == (
        "hand formulas: vLLM's own code is at hand for 0.27.1 only, not 0.25.1"
    )


def test_calibration_marks_the_boots_vllm_sized(invoke: Invoke, sizer: VllmPoolSizer) -> None:
    run = invoke("fit", "calibration")
    lines = run.output.splitlines()
    row = next(line for line in lines if line.startswith("q38-awq-v0271-mtp3-095 "))
    assert row.endswith(" *") and " +0.0% " in row
    assert "* pool sized by vLLM 0.27.1's get_kv_cache_configs" in lines
