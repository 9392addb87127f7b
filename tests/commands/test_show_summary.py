"""`show` as a person reads it: the compose header's facts, what the profile is for, the engine
bugs it runs into with their mitigations, the weights' pin, and the evidence newest first."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import Invoke

FAST = "qwen38-27b-dual-fast"
Q8KXL = "qwen38-27b-dual-q8kxl"  # llama.cpp


def test_the_summary_says_what_the_compose_header_says(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    run = invoke("show", FAST)
    assert run.code == 0, run.text
    lines = run.out.splitlines()
    assert lines[0] == f"{FAST}: Qwen3.8-27B INT4 AutoRound + MTP n=4, TP2"
    facts = {ln[:11].strip(): ln[12:] for ln in lines[1:] if ln[:11].strip()}
    assert facts["Status"] == "experimental"
    assert facts["Engine"] == "vllm-v0.27.1 (vllm), image vllm/vllm-openai:v0.27.1"
    assert facts["Rig"] == "2x3090-pcie: 2x NVIDIA GeForce RTX 3090, TP 2"
    assert facts["Context"] == "262,144 tokens x 1 sequence"
    assert facts["KV"] == "fp8_e4m3"
    assert facts["Drafter"] == "qwen-mtp-builtin (mtp, n=4)"
    assert facts["Patches"].startswith("w4a8-int8-act -> ")
    assert facts["Serves"] == f"qwen3.8-27b on port 8113 (container vllm-{FAST})"
    assert facts["Pin"].startswith("weights Frozenlock/Qwen3.8-27B-int4-AutoRound: UNPINNED: ")
    assert facts["Best for"].startswith("fastest decode with the built-in MTP head (read at ")
    exposure = lines.index(next(ln for ln in lines if ln.startswith("Exposures   vllm#50021: ")))
    assert lines[exposure + 1] == " " * 12 + "  mitigation: SPEC=off: serve without the drafter"
    # Evidence newest first, each with its rig.
    dated = [ln.split()[0] for ln in lines if ln.startswith(" " * 12 + "20")]
    assert dated and dated == sorted(dated, reverse=True)
    assert all(" on 2x3090-pcie (" in ln for ln in lines if ln.startswith(" " * 12 + "20"))
    assert "~" not in run.out and "None" not in run.out
    assert lines[-1] == f"Every setting: profilegen show {FAST} --format yaml"


def test_the_summary_fits_the_terminal_and_yaml_is_the_whole_profile(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    lines = invoke("show", Q8KXL).out.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert "KV          q8_0" in lines
    yaml = invoke("show", Q8KXL, "--format", "yaml").out
    assert yaml.startswith(f"id: {Q8KXL}\n") and "resolved:" in yaml
    data = json.loads(invoke("show", Q8KXL, "--format", "json").out)
    assert data["id"] == Q8KXL and data["resolved"]["container_name"]
