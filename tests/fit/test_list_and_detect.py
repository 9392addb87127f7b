"""`list --rig/--fits/--detect` (NVML faked in sys.modules) and the fit-capacity check rule."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import pytest

from profilegen.check.rules import CheckContext
from profilegen.check.rules.fit import capacity
from profilegen.errors import Severity
from profilegen.fit.detect import LocalGpu, detect_rig
from profilegen.registry import Registry

from .conftest import GGUF, MTP, Invoke

MIB = 1 << 20
RTX3090 = ("NVIDIA GeForce RTX 3090", 24576 * MIB)  # what NVML reports for a 3090


def fake_nvml(cards: list[tuple[str | bytes, int]], fail_init: bool = False) -> types.ModuleType:
    """A stand-in for nvidia-ml-py's pynvml with the calls gpus.py makes."""
    nvml = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def init() -> None:
        if fail_init:
            raise NVMLError("Driver Not Loaded")

    nvml.NVMLError = NVMLError  # type: ignore[attr-defined]
    nvml.nvmlInit = init  # type: ignore[attr-defined]
    nvml.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetCount = lambda: len(cards)  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetName = lambda h: cards[h][0]  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetMemoryInfo = (  # type: ignore[attr-defined]
        lambda h: types.SimpleNamespace(total=cards[h][1], free=cards[h][1], used=0)
    )
    return nvml


def list_json(invoke: Invoke, *args: str) -> list[dict[str, Any]]:
    result = invoke("list", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def test_list_rig_judges_each_profile_as_it_renders(invoke: Invoke) -> None:
    rows = {r["id"]: r for r in list_json(invoke, "--rig", "4x3090-pcie", "--all")}
    fast = rows[MTP]["fit"]
    assert fast["rig"] == "4x3090-pcie" and fast["fits"] and fast["headroom_tokens"] > 0
    # Eight GPUs of TP do not run on four: the container refuses, so the profile does not fit.
    multi8 = rows["qwen38-27b-multi8-fast"]["fit"]
    assert multi8 == {
        "rig": "4x3090-pcie",
        "fits": False,
        "needs_gpus": 8,
        "verdict": "no: needs 8 GPUs",
    }
    eagle3 = rows["qwen36-27b-dual-eagle3"]["fit"]  # SGLang: its static memory fraction
    assert eagle3["rig"] == "4x3090-pcie" and eagle3["kv_pool_tokens"] > 0


def test_list_fits_on_one_3090_shows_what_starts_there_and_nothing_retired(invoke: Invoke) -> None:
    rows = {r["id"]: r for r in list_json(invoke, "--rig", "1x3090", "--fits")}
    assert rows and all(r["fit"]["fits"] or r["fit"]["would_fit"] for r in rows.values())
    # The production one-card profile starts at 32K: vLLM batches 2,048 tokens by default on
    # a card under 70 GiB, which leaves its pool 36K tokens.
    minimal = rows["qwen36-27b-minimal"]["fit"]
    assert minimal["verdict"] == "yes" and minimal["kv_pool_tokens"] > 32768
    assert all(r["status"] != "retired" for r in rows.values())
    # Built for one 3090 with 256 sequences: it starts, its pool holds 1.6 full-length ones.
    gemma = rows["gemma-26ba4b-single"]["fit"]
    assert gemma["verdict"].startswith("yes, 1.1 of 256 at full length") and gemma["boots"]
    assert GGUF in rows and MTP not in rows  # INT4 weights alone overflow one card
    assert "tess-dual-mtp" not in rows  # two cards' split on one card
    text = invoke("list", "--rig", "1x3090", "--fits").stdout
    assert "TOK/S" in text and GGUF in text and MTP not in text and "retired" not in text
    # Gemma 4 31B on v0.27.1 does not boot as it renders on two 3090s; a shorter context would.
    dual = {r["id"]: r for r in list_json(invoke, "--rig", "2x3090", "--fits")}
    gemma31 = dual["gemma-31b-dual"]["fit"]
    assert gemma31["verdict"] == "no: does not boot"
    assert 0 < gemma31["would_fit"]["max_model_len"] < dual["gemma-31b-dual"]["max_model_len"]
    text = invoke("list", "--rig", "2x3090", "--fits").stdout
    line = next(x for x in text.splitlines() if x.startswith("gemma-31b-dual "))
    assert line.endswith(f"  at {gemma31['would_fit']['max_model_len'] // 1024}k x2")


def test_list_on_two_3090s_refuses_multi_card_profiles_and_ranks_by_measured_speed(
    invoke: Invoke,
) -> None:
    rows = list_json(invoke, "--rig", "2x3090")
    assert {r["fit"]["rig"] for r in rows} == {"2x3090-pcie"}  # 2x3090 names the registry's rig
    multi = {r["id"]: r["fit"] for r in rows if "-multi4-" in r["id"] or "-multi8-" in r["id"]}
    assert multi and all(
        f["verdict"] in ("no: needs 4 GPUs", "no: needs 8 GPUs") for f in multi.values()
    )
    assert not set(multi) & {r["id"] for r in list_json(invoke, "--rig", "2x3090", "--fits")}
    # Those that start first; among them, the speed measured on these cards ranks, best first,
    # and a speed from other cards never does.
    starting = [r for r in rows if r["fit"]["fits"]]
    assert rows[: len(starting)] == starting
    here = [r for r in starting if r["speed"] and r["speed"]["tier"] <= 1]
    speeds = [r["speed"]["narrative"] for r in here]
    assert len(speeds) >= 10 and speeds == sorted(speeds, reverse=True)
    assert starting[: len(here)] == here  # measured on these cards first
    # Measured on 2x5090 only: shown apart, ranked after every speed of these cards.
    elsewhere = next(r for r in rows if r["id"] == "qwen-35b-a3b-dual")
    assert elsewhere["speed"]["rig"] == "2x5090" and elsewhere["speed"]["tier"] == 2
    assert starting.index(elsewhere) >= len(here)
    text = invoke("list", "--rig", "2x3090", "--wide").stdout
    line = next(x for x in text.splitlines() if x.startswith("qwen-35b-a3b-dual "))
    assert " -  " in line and "249.4 / 247.8 2x5090" in line  # not this rig's; says where


def test_list_filters_and_hides_retired_profiles(invoke: Invoke) -> None:
    everything = list_json(invoke, "--all")
    shown = list_json(invoke)
    assert {r["id"] for r in shown} == {r["id"] for r in everything if r["status"] != "retired"}
    assert all(r["title"] for r in shown)
    assert {r["engine"] for r in list_json(invoke, "--engine", "llama.cpp")} == {"llama.cpp"}
    assert {r["model"] for r in list_json(invoke, "--model", "qwen3.8")} == {"qwen3.8-27b"}
    retired = list_json(invoke, "--status", "retired")
    assert retired and {r["status"] for r in retired} == {"retired"}
    bad = invoke("list", "--engine", "vlm")
    assert bad.exit_code == 2 and "no engine 'vlm'" in bad.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fits",), "--fits needs --rig or --detect"),
        (("--rig", "1x3090", "--detect"), "not both"),
        (("--rig", "3x3080"), "no GPU '3080' (did you mean '3090'?)"),
        (("--rig", "2x3090-pice"), "no rig '2x3090-pice' (did you mean '2x3090-pcie'?)"),
    ],
)
def test_list_usage_errors(invoke: Invoke, args: tuple[str, ...], message: str) -> None:
    result = invoke("list", *args)
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output


def test_detect_with_fake_nvml(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([RTX3090, RTX3090]))
    rows = {r["id"]: r for r in list_json(invoke, "--detect")}
    assert rows[MTP]["fit"]["rig"] == "detected" and rows[MTP]["fit"]["fits"]
    text = invoke("list", "--detect", "--fits").stdout
    assert text.startswith("rig detected: 2 x NVIDIA GeForce RTX 3090") and MTP in text


def test_detect_accepts_bytes_names_and_matches_by_vram(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    rtx4090 = fake_nvml([(b"NVIDIA GeForce RTX 4090", 24564 * MIB)])
    monkeypatch.setitem(sys.modules, "pynvml", rtx4090)
    rig = detect_rig(registry)
    assert (rig.gpu, rig.count) == ("rtx-4090", 1)


@pytest.mark.parametrize(
    ("module", "message"),
    [
        (None, "pip install 'profilegen[nvml]'"),
        (fake_nvml([], fail_init=True), "NVML cannot start (Driver Not Loaded)"),
        (fake_nvml([]), "NVML reports no GPU"),
        (fake_nvml([("NVIDIA B200", 183359 * MIB)]), "matches no registry GPU"),
        (fake_nvml([("NVIDIA GeForce RTX 3090", 12288 * MIB)]), "matches no registry GPU"),
    ],
)
def test_detect_problems_are_clear_messages(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, module: types.ModuleType | None, message: str
) -> None:
    # A None entry in sys.modules makes `import pynvml` raise ImportError.
    monkeypatch.setitem(sys.modules, "pynvml", module)
    result = invoke("list", "--detect")
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_local_gpu_matching_is_by_name_then_memory(registry: Registry) -> None:
    card = LocalGpu(0, "NVIDIA RTX A6000", 49140 * MIB, 0)
    assert detect_rig(registry, [card, card]).gpu == "rtx-a6000"


def test_fit_capacity_rule_warns_with_pool_need_and_shortfall(registry: Registry) -> None:
    findings = list(capacity(CheckContext(registry)))
    assert all(f.rule == "fit-capacity" and f.severity is Severity.WARNING for f in findings)
    by_file = {f.location.file: f for f in findings}
    dual_max = by_file["registry/profiles/qwen38-27b-dual-max.yaml"]
    assert "266,537 tokens" in dual_max.message  # predicted pool
    assert "524,288" in dual_max.message and "by 257,751" in dual_max.message
    assert "registry/profiles/qwen38-27b-dual-nvfp4.yaml" in by_file
    assert f"registry/profiles/{MTP}.yaml" not in by_file
    assert f"registry/profiles/{GGUF}.yaml" not in by_file


def test_a_predicted_refusal_says_why_it_is_only_a_warning(registry: Registry) -> None:
    """Where fit predicts that the engine refuses, the warning says what overrules that: the
    profile seen serving on its rig, or its own caveats."""
    by_file = {f.location.file: f.message for f in capacity(CheckContext(registry))}
    served = by_file["registry/profiles/qwen38-27b-dual-ultrafast.yaml"]
    assert served.endswith(
        "(0.99x concurrency; fit predicts the engine refuses to boot, yet it was seen serving "
        "on 2x3090-pcie: a boot there at these settings decides)"
    )
    caveated = by_file["registry/profiles/qwen38-27b-single-nvfp4.yaml"]
    assert caveated.endswith(
        "(0.00x concurrency; fit predicts the engine refuses to boot, as its caveats say)"
    )
