"""Representative vLLM profiles booted for real: each bundle's rendered entrypoint starts the
real `vllm serve` of the pinned release (its CPU build) on a tiny Qwen3-Next model, in a box laid
out as the image is, and the tests talk to it: served names, chat, a tool call through the
profile's tool parser, thinking on and off through its reasoning parser and chat-template
switch, the API key, the patch steps on the real installed source, and the real LiteLLM
proxy. What the CPU run changes from the rig is `tests/support/vllm_cpu.py`'s table, listed
in the test output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.engines.test_llamacpp_boots import call
from tests.support.realvllm import API_KEY, BOOTS
from tests.support.vllm_cpu import KV_BYTES, KV_GIB, substitutions
from tests.support.vllm_standins import STANDIN

# Greedy, and as many tokens as asked for (the random weights may say the end-of-turn token).
CHAT = {
    "messages": [{"role": "user", "content": "Say hello."}],
    "max_tokens": 4,
    "temperature": 0,
    "ignore_eos": True,
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
# The tiny model's weights are random: what it says is forced by a structured-output regex,
# so that what the parser makes of it is known.
TOOL_TEXT = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


def engine(state: dict[str, Any], name: str) -> tuple[str, str | None, dict[str, Any]]:
    found: dict[str, Any] = state["engines"][name]
    return found["url"], found["boot"]["api_key"], found


def log_of(found: dict[str, Any]) -> str:
    return Path(found["log"]).read_text(errors="replace")


@pytest.mark.parametrize("name", [b.name for b in BOOTS])
def test_vllm_serves_the_profile_s_names(real_vllm: dict[str, Any], name: str) -> None:
    url, key, found = engine(real_vllm, name)
    assert call(url, "/health") == (200, None)
    status, models = call(url, "/v1/models", key=key)
    assert status == 200, models
    assert [m["id"] for m in models["data"]] == found["names"]
    for served in found["names"]:
        status, answer = call(url, "/v1/chat/completions", {**CHAT, "model": served}, key=key)
        assert status == 200, answer
        assert answer["model"] == found["names"][0]  # vLLM answers with its first name
        assert answer["choices"][0]["message"]["role"] == "assistant"
        assert answer["usage"]["completion_tokens"] == CHAT["max_tokens"]
        assert answer["usage"]["prompt_tokens"] > 0


def test_the_api_key_is_asked_of_every_request(real_vllm: dict[str, Any]) -> None:
    url, _, found = engine(real_vllm, "reference")
    body = {**CHAT, "model": found["names"][0]}
    assert call(url, "/v1/chat/completions", body)[0] == 401
    assert call(url, "/v1/chat/completions", body, key="sk-wrong")[0] == 401
    assert call(url, "/v1/chat/completions", body, key=API_KEY)[0] == 200
    assert call(url, "/v1/models")[0] == 401
    # The key never reaches the engine's command line or its log.
    assert API_KEY not in log_of(found)


def test_a_tool_call_comes_back_through_the_profile_s_tool_parser(
    real_vllm: dict[str, Any],
) -> None:
    url, key, found = engine(real_vllm, "a3b")
    body = {
        "model": found["names"][0],
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [WEATHER],
        "tool_choice": "auto",
        "max_tokens": 64,
        "temperature": 0,
        "structured_outputs": {"regex": TOOL_TEXT.replace("\n", "\\n")},
    }
    status, answer = call(url, "/v1/chat/completions", body, key=key)
    assert status == 200, answer
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls", answer
    (tool_call,) = choice["message"]["tool_calls"]
    assert tool_call["function"]["name"] == "get_weather"
    assert json.loads(tool_call["function"]["arguments"]) == {"city": "Paris"}


def _prompt(url: str, key: str | None, model: str, kwargs: dict[str, Any] | None) -> str:
    body: dict[str, Any] = {"model": model, "messages": CHAT["messages"]}
    if kwargs is not None:
        body["chat_template_kwargs"] = kwargs
    status, tokens = call(url, "/tokenize", body, key=key)
    assert status == 200, tokens
    status, text = call(url, "/detokenize", {"model": model, "tokens": tokens["tokens"]}, key=key)
    assert status == 200, text
    prompt: str = text["prompt"]
    return prompt


@pytest.mark.parametrize("name", [b.name for b in BOOTS])
def test_the_thinking_switch_reaches_the_chat_template(
    real_vllm: dict[str, Any], name: str
) -> None:
    """The profile's default (ENABLE_THINKING=false) is the template's: an empty thinking
    block ends the prompt, unless a request turns thinking on."""
    url, key, found = engine(real_vllm, name)
    model = found["names"][0]
    empty_think = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert _prompt(url, key, model, None).endswith(empty_think)
    assert _prompt(url, key, model, {"enable_thinking": False}).endswith(empty_think)
    assert _prompt(url, key, model, {"enable_thinking": True}).endswith("<|im_start|>assistant\n")


def test_the_reasoning_parser_follows_the_thinking_switch(real_vllm: dict[str, Any]) -> None:
    """Thinking off (the profile's default): the answer is content; on: it is reasoning."""
    url, key, found = engine(real_vllm, "a3b")
    # Special tokens are written out: whatever the random weights say is then text.
    body = {**CHAT, "model": found["names"][0], "skip_special_tokens": False}
    off = call(url, "/v1/chat/completions", body, key=key)[1]
    assert off["choices"][0]["message"]["content"], off
    assert off["choices"][0]["message"]["reasoning"] is None, off
    body["chat_template_kwargs"] = {"enable_thinking": True}
    on = call(url, "/v1/chat/completions", body, key=key)[1]
    assert on["choices"][0]["message"]["reasoning"], on
    assert on["choices"][0]["message"]["content"] is None, on


def test_the_patch_steps_applied_to_the_real_installed_source(real_vllm: dict[str, Any]) -> None:
    _, _, found = engine(real_vllm, "reference")
    log = log_of(found)
    package = Path(found["package"])
    steps = [
        ("pr48375/install.sh", "done", "__init__.py"),
        ("dflash2/install.sh", "done", "__init__.py"),
        ("dflash15/hybrid-kv-groups-v2-cudagraph.patch", "applied", "v1/core/kv_cache_utils.py"),
        ("dflash15/qwen3_5-embed-quant.patch", "applied", "model_executor/models/qwen3_5.py"),
        ("dflash15/spec-decode-attn.patch", "applied", "v1/attention/backends/flash_attn.py"),
        ("dflash15/dflash2-lookup-drafting.patch", "applied", "v1/worker/gpu/spec_decode/dflash2/lookup.py"),
        ("wsl-uva/install.sh", "done", "v1/worker/gpu/buffer_utils.py"),
    ]  # fmt: skip
    for step, said, target in steps:
        assert f"profilegen: {step}: {said}" in log, log[-3000:]
        assert STANDIN in (package / target).read_text(), target


def test_what_the_cpu_run_changed_is_stated_and_seen(real_vllm: dict[str, Any]) -> None:
    from profilegen.registry.cached import open_registry_cached

    registry = open_registry_cached(Path(real_vllm["root"]))
    _, _, found = engine(real_vllm, "reference")
    profile = registry.profiles[found["boot"]["profile"]]
    lines = [s.line() for s in substitutions(profile, found["boot"]["tiny"])]
    assert found["substitutions"][: len(lines)] == lines
    patched = [s for s in found["substitutions"] if s.startswith("patch ")]
    assert len(patched) == 4, found["substitutions"]
    log = log_of(found)
    # The rig's backend was asked for, and vLLM's CPU platform said what it used instead.
    assert "'attention_backend': 'FLASH_ATTN'" in log
    assert "Cannot use AttentionBackendEnum.FLASH_ATTN backend on CPU." in log
    assert "Using HND KV cache layout for CPU_ATTN backend." in log
    assert "profilegen: speculative decoding: off" in log
    # The pinned pool: the flag through the parser, the CPU worker's own space in use.
    assert f"'kv_cache_memory_bytes': {KV_BYTES}" in log
    assert f"Explicitly set ({KV_GIB}.0/" in log


@pytest.mark.parametrize("name", [b.name for b in BOOTS])
def test_the_engine_core_is_forked_from_the_api_server(
    real_vllm: dict[str, Any], name: str
) -> None:
    """As the table says: one Python imported vLLM (a spawned core logs its import again)."""
    _, _, found = engine(real_vllm, name)
    log = log_of(found)
    assert log.count("Triton is installed but 0 active driver(s) found") == 1, log[-3000:]
    assert "(EngineCore pid=" in log


def test_vllm_s_model_class_cache_is_the_kept_folder(real_vllm: dict[str, Any]) -> None:
    """As the table says: vLLM wrote what each tiny model's class supports where it is kept."""
    kept = Path(real_vllm["env"]["modelinfos"])
    for module, cls in [("qwen3_next", "Qwen3NextForCausalLM"), ("qwen3", "Qwen3ForCausalLM")]:
        entry = json.loads((kept / f"vllm-model_executor-models-{module}-{cls}.json").read_text())
        assert set(entry) == {"hash", "modelinfo"}, entry


def test_fp8_kv_is_what_the_a3b_profile_boots_with(real_vllm: dict[str, Any]) -> None:
    _, _, found = engine(real_vllm, "a3b")
    assert "kv_cache_dtype=fp8," in log_of(found)


def test_the_proxy_routes_every_name_to_its_real_vllm(real_vllm: dict[str, Any]) -> None:
    proxy = real_vllm["proxy"]
    expected = {n for e in real_vllm["engines"].values() for n in e["names"]}
    status, models = call(proxy, "/v1/models")
    assert status == 200, models
    assert {m["id"] for m in models["data"]} >= expected
    for route in sorted(expected):
        status, answer = call(proxy, "/v1/chat/completions", {**CHAT, "model": route})
        assert status == 200, f"{route}: {answer}"
        assert answer["usage"]["completion_tokens"] == CHAT["max_tokens"], answer
