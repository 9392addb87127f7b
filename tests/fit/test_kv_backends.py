"""One judge of which KV dtypes a GPU's attention backend takes: fit, check, new, explain and
the entrypoint guard all ask model/kv_backends.py, so fit never says FITS for a setting the
container refuses."""

from __future__ import annotations

import json

from profilegen.model.kv_backends import accepted_dtypes, kv_dtype_decision
from profilegen.registry import Registry
from profilegen.render.context import Context

from .conftest import MTP, SEED, Invoke


def test_a_named_backend_that_takes_no_fp8_refuses_it_and_says_which_would(
    registry: Registry,
) -> None:
    engine, gpu = registry.engines["vllm-v0.27.1"], registry.gpus["rtx-3090"]
    decision = kv_dtype_decision(engine, gpu, "fp8_e4m3", "FLASH_ATTN")
    assert not decision.ok
    assert decision.reason == (
        "FLASH_ATTN on NVIDIA GeForce RTX 3090 (sm 8.6) does not take fp8_e4m3 KV "
        "(takes: auto, bfloat16, float16) (FLASHINFER or TRITON_ATTN would)"
    )


def test_with_no_backend_named_vllm_picks_the_first_that_takes_the_dtype(
    registry: Registry,
) -> None:
    engine = registry.engines["vllm-v0.27.1"]
    for gpu in ("rtx-3090", "rtx-4090"):
        decision = kv_dtype_decision(engine, registry.gpus[gpu], "fp8_e4m3", None)
        assert decision.ok and decision.picked and decision.backend == "FLASHINFER"
    bf16 = kv_dtype_decision(engine, registry.gpus["rtx-3090"], "bfloat16", None)
    assert bf16.backend == "FLASH_ATTN"
    # vLLM's Triton backend takes per-token-head int8 (triton_attn.py at 0.27.1).
    int8 = kv_dtype_decision(engine, registry.gpus["rtx-3090"], "int8_per_token_head", None)
    assert int8.ok and int8.backend == "TRITON_ATTN"


def test_an_engine_without_backend_tables_is_judged_by_its_own_list(registry: Registry) -> None:
    engine = registry.engines["llama.cpp-b10236"]
    gpu = registry.gpus["rtx-3090"]
    assert kv_dtype_decision(engine, gpu, "q4_0", None).ok
    refused = kv_dtype_decision(engine, gpu, "fp8_e4m3", None)
    assert not refused.ok and refused.reason.startswith("llama.cpp ")
    assert accepted_dtypes(engine, gpu, None) == tuple(engine.kv_cache_dtypes)


def test_fit_refuses_what_the_container_refuses(invoke: Invoke) -> None:
    fp8 = invoke("fit", SEED, "--set", "envelope.kv_cache_dtype=fp8_e4m3")
    assert fp8.exit_code == 1
    assert "FITS" not in fp8.output
    assert (
        "verdict   REFUSED: the container will not boot: FLASH_ATTN on NVIDIA GeForce RTX 3090 "
        "(sm 8.6) does not take fp8_e4m3 KV (takes: auto, bfloat16, float16) (FLASHINFER or "
        "TRITON_ATTN would)"
    ) in fp8.output.splitlines()
    util = invoke("fit", SEED, "--set", "envelope.gpu_memory_utilization=0.95")
    assert util.exit_code == 1
    assert "FITS" not in util.output
    assert (
        "verdict   REFUSED: the container will not boot: gpu_memory_utilization 0.95 exceeds "
        "rig 2x3090-pcie-x16x4-wsl2's cap of 0.85"
    ) in util.output


def test_fit_json_names_the_refusal(invoke: Invoke) -> None:
    run = invoke("fit", SEED, "--kv-dtype", "fp8_e4m3", "--format", "json")
    data = json.loads(run.stdout)
    assert data["fits"] is False
    assert data["refused"][0].startswith("FLASH_ATTN on NVIDIA GeForce RTX 3090")


def test_fit_takes_fp8_on_4090s_as_new_and_check_do(invoke: Invoke) -> None:
    # No backend named: vLLM serves fp8 with FlashInfer on sm 8.9 (new proposes it too).
    run = invoke("fit", MTP, "--rig", "4x4090", "--tp", "4", "--format", "json")
    data = json.loads(run.stdout)
    assert (data["kv_cache_dtype"], data["tp"], data["refused"]) == ("fp8_e4m3", 4, [])


def test_the_entrypoint_guard_is_handed_the_judges_table(registry: Registry) -> None:
    ctx = Context(registry, registry.profiles[SEED])
    assert ctx.kv_backends["FLASH_ATTN"] == ["auto", "bfloat16", "float16"]
    # None named: whatever some backend takes (the engine picks it).
    assert "fp8_e4m3" in ctx.kv_backends[""]
    assert "int8_per_token_head" in ctx.kv_backends[""]
