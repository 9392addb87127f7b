"""Choosing a profile: one rig vocabulary in every command, the container's refusal of fewer GPUs
than TP, the registry's rigs, engines and GPUs listed, and two profiles compared."""

from __future__ import annotations

import json

from tests.support.cli import Invoke

MULTI4 = "qwen38-27b-multi4-fast"


def test_explain_with_fewer_gpus_than_tp_refuses_as_the_container_would(invoke: Invoke) -> None:
    run = invoke("explain", MULTI4, "--gpus", "2")
    assert run.code == 1
    assert (
        "REFUSED with exit code 2: TP=4 needs 4 GPUs, this container sees 2; refusing to boot"
        in run.out
    )
    visible = invoke("explain", MULTI4, "-e", "CUDA_VISIBLE_DEVICES=0,1", "--format", "json")
    assert (
        json.loads(visible.out)["message"]
        == "TP=4 needs 4 GPUs, this container sees 2; refusing to boot"
    )
    assert invoke("explain", MULTI4, "--gpus", "4").code == 0


def test_one_rig_vocabulary_in_every_command(invoke: Invoke) -> None:
    fit = json.loads(
        invoke("fit", "qwen38-27b-dual-fast", "--rig", "2x3090", "--format", "json").out
    )
    assert fit["rig"] == "2x3090-pcie"
    rows = json.loads(invoke("list", "--rig", "2x3090", "--format", "json").out)
    assert {r["fit"]["rig"] for r in rows} == {"2x3090-pcie"}
    gateway = invoke("gateway", "--rig", "2x3090", "--engine-host", "127.0.0.1")
    assert "no rig" not in gateway.err and "did you mean" not in gateway.err
    for command in (
        ("gateway", "--rig"),
        ("list", "--rig"),
        ("fit", "qwen38-27b-dual-fast", "--rig"),
    ):
        typo = invoke(*command, "2x3090-pice")
        assert (typo.code, typo.err.strip()) == (
            2,
            "error: no rig '2x3090-pice' (did you mean '2x3090-pcie'?)",
        )
    lacking = invoke("gateway", "--rig", "2x4090")
    assert lacking.code == 2 and lacking.err.startswith(
        "error: no registry rig of 2 x NVIDIA GeForce RTX 4090 (registry rigs: "
    )


def test_rigs_engines_and_gpus_are_listed(invoke: Invoke) -> None:
    rigs = {r["id"]: r for r in json.loads(invoke("rigs", "--format", "json").out)}
    assert rigs["2x3090-pcie"]["also"] == "2x3090" and rigs["2x3090-nvlink"]["also"] is None
    assert rigs["2x3090-pcie"]["cards"] == "2x rtx-3090" and rigs["2x3090-pcie"]["profiles"] > 0
    text = invoke("rigs").out.splitlines()
    assert text[0].split() == ["ID", "ALSO", "NAME", "CARDS", "LINK", "HOST", "POLICY", "PROFILES"]
    engines = {e["id"]: e for e in json.loads(invoke("engines", "--format", "json").out)}
    assert engines["vllm-v0.27.1"]["family"] == "vllm" and engines["vllm-v0.27.1"]["profiles"] > 0
    gpus = {g["id"]: g for g in json.loads(invoke("gpus", "--format", "json").out)}
    assert (gpus["rtx-3090"]["vram"], gpus["rtx-3090"]["sm"]) == ("24 GiB", "8.6")


def test_diff_names_what_two_profiles_do_differently(invoke: Invoke) -> None:
    data = json.loads(
        invoke("diff", "qwen38-27b-dual-fast", "qwen38-27b-dual-max", "--format", "json").out
    )
    settings = {c["what"]: (c["a"], c["b"]) for c in data["settings"]}
    assert settings["weights"] == ("autoround-int4", "fp8")
    assert settings["drafter.width"] == (4, 3)
    assert {c["what"]: (c["a"], c["b"]) for c in data["patches"]}["w4a8-int8-act"] == (
        "applied",
        None,
    )
    flags = {c["what"]: (c["a"], c["b"]) for c in data["engine_flags"]}
    assert flags["--kv-cache-dtype"] == ("fp8_e4m3", "fp8")
    assert "--tensor-parallel-size" not in flags  # the same on both
    assert data["evidence"]["qwen38-27b-dual-fast"].startswith(
        "5 record(s); newest speed 74.9 / 103.5"
    )
    same = invoke("diff", "qwen38-27b-dual-fast", "qwen38-27b-dual-fast")
    assert "settings: the same" in same.out and "engine flags: the same" in same.out
