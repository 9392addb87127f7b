"""`profilegen fit`: the registry mapped onto the fit math, what-ifs, output and errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from profilegen.fit import formulas as fm
from profilegen.fit.engine_inputs import vllm_inputs
from profilegen.fit.inputs import artifact_bytes, patch_effects
from profilegen.fit.predict import FitOptions, fit_profile, retarget
from profilegen.lockfile.lock import Lock
from profilegen.registry import Registry
from tests.support.cli import invoke_in

from .conftest import GGUF, MTP, SEED, Invoke

FitJson = Callable[..., dict[str, Any]]
NO_BOOTS = "qwen38-27b-dual-superfast"  # no evidence recorded on it
GIB = 1 << 30


def test_json_keys_and_types(fit_json: FitJson) -> None:
    data = fit_json(MTP)
    types = {
        "profile": str,
        "engine": str,
        "rig": str,
        "tp": int,
        "kv_pool_tokens": int,
        "kv_pool_bytes_per_gpu": int,
        "kv_bytes_per_token_per_gpu": int,
        "max_model_len": int,
        "max_num_seqs": int,
        "fits": bool,
        "headroom_tokens": int,
        "budget": dict,
        "kv_cache_bytes": int,
        "notes": list,
    }
    for key, kind in types.items():
        assert isinstance(data[key], kind), key
    where = (data["profile"], data["engine"], data["rig"], data["tp"])
    assert where == (MTP, "vllm", "2x3090-pcie", 2)
    assert data["headroom_tokens"] == data["kv_pool_tokens"] - 262144
    budget = data["budget"]
    assert list(budget)[:4] == ["total", "claimed_by_util", "weights", "drafter"]
    assert {
        "activations",
        "cuda_graphs",
        "runtime_overhead",
        "kv_pool",
        "desktop_reservation",
        "free",
    } <= set(budget)
    assert all(isinstance(v, int) for v in budget.values())
    assert budget["kv_pool"] == data["kv_pool_bytes_per_gpu"]


def test_seed_pinned_pool_fits_244320_tokens(fit_json: FitJson) -> None:
    data = fit_json(SEED)
    assert data["fits"] and data["kv_pool_tokens"] >= 244320 == data["max_model_len"]
    assert data["budget"]["kv_pool"] <= 9_000_000_000
    # The WSL2 rig's desktop card is the tight one, and it still has room.
    assert data["budget"]["desktop_reservation"] == GIB and data["budget"]["free"] > 0


def test_seed_maps_the_patch_effects_and_the_drafter_shape(registry: Registry) -> None:
    profile = registry.profiles[SEED]
    assert "prefer-padding-sliding-window-groups" in patch_effects(registry, profile)
    inputs = vllm_inputs(registry, retarget(registry, profile, FitOptions()), None)
    assert inputs.prefer_padding_sliding_window_groups
    assert inputs.cudagraph_reserve_bytes == 1900 << 20
    assert inputs.kv_cache_memory_bytes == 9_000_000_000
    d = inputs.drafter
    assert d is not None and (d.kind, d.num_kv_layers, d.sliding_window) == ("dflash", 5, 2048)
    assert fm.predict_vllm(inputs).group_size == 8


def test_an_mtp_head_the_target_never_loads_is_not_counted(registry: Registry) -> None:
    """vLLM's target model skips `mtp.*`: the seed drafts with DFlash, not the built-in head,
    so its weights are the artifact less the head; an MTP profile counts the head as drafter."""
    for pid in (SEED, MTP):
        profile = registry.profiles[pid]
        inputs = vllm_inputs(registry, retarget(registry, profile, FitOptions()), None)
        artifact = registry.models[profile.model].artifacts[profile.weights]
        declared = artifact_bytes(artifact, profile.weights, None)
        head = int(fm.mtp_head_params(inputs.shape) * 4.25 / 8)  # the INT4 target's bits
        assert inputs.shape.mtp_layers == 1
        assert inputs.weights_bytes == declared
        if pid == SEED:
            assert inputs.unloaded_weights_bytes == head
        else:
            assert inputs.unloaded_weights_bytes == 0
            assert inputs.drafter is not None and inputs.drafter.weights_bytes == head


def test_raising_util_grows_the_pool(fit_json: FitJson) -> None:
    low = fit_json(MTP, "--gpu-util", "0.85")
    high = fit_json(MTP, "--gpu-util", "0.95")
    assert high["kv_pool_tokens"] > low["kv_pool_tokens"]
    assert (low["gpu_memory_utilization"], high["gpu_memory_utilization"]) == (0.85, 0.95)


def test_bf16_kv_gives_about_half_the_tokens_of_fp8(registry: Registry) -> None:
    profile = registry.profiles[MTP]
    for pinned in (8 * GIB, None):  # the same pinned budget, and the same util budget
        fp8, bf16 = (
            fit_profile(registry, profile, FitOptions(kv_dtype=kv, spec_n=0, kv_cache_memory=mem))
            for kv, mem in (("fp8_e4m3", pinned), ("bfloat16", pinned))
        )
        assert 0.45 <= bf16.kv_pool_tokens / fp8.kv_pool_tokens <= 0.55
        assert bf16.kv_bytes_per_token_per_gpu == 2 * fp8.kv_bytes_per_token_per_gpu


def test_drafter_off_grows_the_pool_of_an_mtp_profile(fit_json: FitJson) -> None:
    on, off = fit_json(MTP), fit_json(MTP, "--spec-n", "0")
    assert (on["spec_n"], off["spec_n"]) == (4, 0)
    assert off["kv_pool_tokens"] > on["kv_pool_tokens"]
    assert off["budget"]["drafter"] == 0 < on["budget"]["drafter"]


def test_what_if_options_are_applied(fit_json: FitJson) -> None:
    base = fit_json(MTP)
    data = fit_json(
        MTP, "--max-model-len", "131072", "--max-num-seqs", "3", "--max-num-batched-tokens", "4096"
    )
    assert (data["max_model_len"], data["max_num_seqs"]) == (131072, 3)
    assert data["budget"]["activations"] < base["budget"]["activations"]
    pinned = fit_json(MTP, "--kv-cache-memory", str(6 * GIB))
    assert pinned["budget"]["kv_pool"] <= 6 * GIB < base["budget"]["kv_pool"]
    fp8 = fit_json(MTP, "--weights", "fp8")
    assert fp8["weights"] == "fp8" and fp8["budget"]["weights"] > base["budget"]["weights"]


@pytest.mark.parametrize(
    "spelling",
    [
        ("--set", "envelope.max_model_len=131072", "--set", "envelope.kv_cache_dtype=bfloat16"),
        ("--set", "MAX_MODEL_LEN=131072", "--set", "KV_CACHE_DTYPE=bfloat16"),
        ("--set", "CTX_SIZE=131072", "--set", "KV_TYPE=bfloat16"),
        ("--set", "max-model-len=131072", "--set", "--kv-dtype=bfloat16"),
    ],
)
def test_a_setting_is_the_same_under_every_spelling(
    fit_json: FitJson, spelling: tuple[str, ...]
) -> None:
    by_option = fit_json(MTP, "--max-model-len", "131072", "--kv-dtype", "bfloat16")
    assert (by_option["max_model_len"], by_option["kv_cache_dtype"]) == (131072, "bfloat16")
    assert fit_json(MTP, *spelling) == by_option


def test_rig_changes_the_gpu_count_and_caps_tp(fit_json: FitJson) -> None:
    four = fit_json(MTP, "--rig", "4x3090-pcie", "--tp", "4")
    assert (four["rig"], four["tp"], four["gpus"]) == ("4x3090-pcie", 4, 4)
    assert four["kv_pool_tokens"] > fit_json(MTP)["kv_pool_tokens"]
    one = fit_json(MTP, "--rig", "1x3090")
    assert (one["tp"], one["tp_capped_from"]) == (1, 2)
    assert any("capped" in n for n in one["notes"])
    # A llama.cpp layer split over two cards loses its per-card tensor_split on one card.
    q8 = fit_json("qwen38-27b-dual-q8kxl", "--rig", "1x3090")
    assert (q8["gpus"], q8["fits"]) == (1, False)
    assert any("tensor_split" in n for n in q8["notes"])


def test_text_output_is_a_budget_table(invoke: Invoke) -> None:
    result = invoke("fit", SEED)
    assert result.exit_code == 0
    out = result.stdout
    for label in (
        "claimed by util",
        "weights",
        "drafter",
        "activations",
        "CUDA graphs",
        "runtime overhead",
        "KV pool",
        "desktop reservation",
        "free",
        "FITS",
    ):
        assert label in out
    assert "244,320" in out


def test_the_profiles_own_boots_are_shown_beside_the_answer(invoke: Invoke) -> None:
    out = invoke("fit", MTP).stdout.splitlines()
    start = out.index("measured boots of this profile (each predicted at its own settings):")
    boots = out[start + 1 :]
    assert boots[2] == (
        "  q38-int4-v0251-mtp4  2026-08-16 vllm-v0.25.1 on 2x3090-pcie: 569,185 tokens "
        "measured, 566,288 predicted (-0.5%, ok)"
    )
    assert [line.split()[0] for line in boots] == [
        "q38-int4-v0251-nospec",
        "q38-int4-v0251-mtp4-seqs2",
        "q38-int4-v0251-mtp4",
        "q38-int4-v0271-mtp4",
    ]
    # A what-if changes the answer, not what was measured at the boots' own settings.
    what_if = invoke("fit", MTP, "--max-model-len", "65536").stdout.splitlines()
    assert what_if[what_if.index(out[start]) :] == out[start:]


def test_json_carries_the_profiles_boots(fit_json: FitJson) -> None:
    evidence = {p["key"]: p for p in fit_json(MTP)["evidence"]}
    assert evidence["q38-int4-v0271-mtp4"]["status"] == "fitted"
    assert (
        evidence["q38-int4-v0251-mtp4"]["measured"],
        evidence["q38-int4-v0251-mtp4"]["within"],
    ) == (
        569185,
        True,
    )
    assert fit_json(NO_BOOTS)["evidence"] == []


def test_a_profile_without_boots_shows_none(invoke: Invoke) -> None:
    assert "measured boots" not in invoke("fit", NO_BOOTS).stdout


def test_not_fitting_exits_1_and_says_by_how_much(invoke: Invoke) -> None:
    result = invoke("fit", "qwen38-27b-dual-max")
    assert result.exit_code == 1
    assert "DOES NOT FIT" in result.stdout and "tokens short" in result.stdout


def test_llamacpp_kv_buffer_and_q8_at_full_context(fit_json: FitJson) -> None:
    data = fit_json(GGUF)
    assert data["engine"] == "llama.cpp" and data["fits"]
    # 16 target layers of 1,152 B (q4_0 K and V) and the MTP draft context's one layer in f16
    # (4,096 B) x 262,144 cells: the 4,608 + 1,024 MiB an H200 boot of this shape logged.
    assert data["kv_cache_bytes"] == (16 * 1_152 + 4_096) * 262_144 == (4_608 + 1_024) << 20
    assert data["kv_bytes_per_token_per_gpu"] == 16 * 1_152 + 4_096
    assert not fit_json(GGUF, "--kv-dtype", "q8_0")["fits"]
    assert fit_json(GGUF, "--kv-dtype", "q8_0", "--max-model-len", "131072")["fits"]


def test_lock_total_size_is_preferred(registry: Registry) -> None:
    artifact = registry.models["qwen3.8-27b"].artifacts["autoround-int4"]
    key = "qwen3.8-27b/autoround-int4"
    entry = {
        "repo": artifact.repo,
        "revision": artifact.revision,
        "resolved": True,
        "total_size": 19_000_000_123,
    }
    assert artifact_bytes(artifact, key, Lock({key: entry})) == 19_000_000_123
    unresolved = Lock({key: {**entry, "resolved": False}})
    assert artifact_bytes(artifact, key, unresolved) == artifact.size.bytes
    moved = Lock({key: {**entry, "repo": "someone/else"}})
    assert artifact_bytes(artifact, key, moved) == artifact.size.bytes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((MTP, "--rig", "2x3090-pice"), "did you mean '2x3090-pcie'"),
        ((MTP, "--weights", "autoround-int8"), "did you mean 'autoround-int4'"),
        ((MTP, "--kv-dtype", "fp8_e4m4"), "no KV dtype 'fp8_e4m4'"),
        ((MTP, "--rig", "4x3090-pcie", "--tp", "3"), "--tp 3 must divide"),
        ((MTP, "--tp", "4"), "rig 2x3090-pcie has 2"),
        ((SEED, "--spec-n", "16"), "maximum of 15"),
        ((MTP, "--gpu-util", "1.5"), "1.5"),
        ((GGUF, "--gpu-util", "0.9"), "vLLM and SGLang profiles only"),
        ((GGUF, "--max-num-batched-tokens", "2048"), "vLLM profiles only"),
        ((GGUF, "--weights", "fp8"), "cannot be served by llama.cpp"),
        (("qwen38-27b-nope",), "no profile"),
        ((), "name a PROFILE to fit (or use `fit calibration` or `fit log FILE`)"),
        (("--calibration", "--tp", "2"), "takes no what-if"),
        ((MTP, "--engine", "llama.cpp-b10236"), "fit compares releases of the same engine"),
        ((MTP, "--engine", "vllm-v0.26.0"), "no engine 'vllm-v0.26.0'"),
        ((MTP, "--rig", "2x3080"), "no GPU '3080'"),
        (("--leave-one-out",), "--leave-one-out goes with `fit calibration`"),
        ((MTP, "--record"), "--record and --profile go with `fit log FILE`"),
        (("calibration", "--tp", "2"), "No such option '--tp'"),
        (("log",), "Missing argument 'FILE'"),
        ((MTP, "--set", "envelope.pp=2"), "--set envelope.pp: fit cannot vary envelope.pp; it"),
        ((MTP, "--set", "envelope.tp=0"), "--set envelope.tp=0: input should be greater than 0"),
        ((MTP, "--set", "kv_dtyp=q8_0"), "no envelope setting is called that (did you mean"),
        ((MTP, "--set", "max_model_len"), "--set max_model_len: expected SETTING=VALUE"),
        ((MTP, "--tp", "2", "--set", "TP=1"), "envelope.tp is given twice, with different"),
        (("qwen36-27b-dual-eagle3", "--kv-cache-memory", "9"), "vLLM profiles only"),
    ],
)
def test_bad_options_exit_2_without_a_traceback(
    invoke: Invoke, args: tuple[str, ...], message: str
) -> None:
    result = invoke("fit", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_boot_fit_cannot_predict_is_named_not_fatal(repo: Path) -> None:
    path = repo / "registry" / "profiles" / f"{MTP}.yaml"
    text = path.read_text(encoding="utf-8")
    path.unlink()  # the scratch copy's files may be links into the pristine tree
    old = 'key: q38-int4-v0251-nospec\n    date: "2026-08-16"\n    rig: "2x3090-pcie"\n'
    path.write_text(
        text.replace(old + "    engine: vllm-v0.25.1", old + "    engine: llama.cpp-b10236"),
        encoding="utf-8",
    )
    run = invoke_in(repo, "fit", MTP)
    assert run.code == 0, run.text
    assert (
        "  q38-int4-v0251-nospec  cannot be predicted: engine llama.cpp-b10236 is llama.cpp; "
        f"{MTP} runs vllm (vllm-v0.27.1): fit compares releases of the same engine"
    ) in run.out.splitlines()
