"""Representative llama.cpp profiles booted for real: the rendered entrypoint starts the real
llama-server (built from the pinned build's source) on a tiny GGUF, in a box where the model,
patch and engine paths of the container exist, and the tests talk to it: health, models,
a chat completion, the API key, a patch-file chat template, and the real LiteLLM proxy."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from profilegen.registry.cached import open_registry_cached
from profilegen.render import render_profile
from profilegen.render.bundle import bundle_files, write_bundle
from tests.support import container, realengines
from tests.support.realengines import API_KEY, BOOTS, TEMPLATE

TIMEOUT = 60.0
# Greedy: the tiny model's random weights answer the same tokens every time (a sampled
# answer can be a stray tag the chat parser refuses).
CHAT = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 4, "temperature": 0}


def call(
    url: str, path: str, body: dict[str, Any] | None = None, key: str | None = None
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def key_of(engine: dict[str, Any]) -> str | None:
    key: str | None = engine["boot"]["api_key"]
    return key


@pytest.mark.parametrize("name", [b.name for b in BOOTS])
def test_the_engine_serves_its_names(real_engines: dict[str, Any], name: str) -> None:
    engine = real_engines["engines"][name]
    url, key = engine["url"], key_of(engine)
    status, health = call(url, "/health")
    assert (status, health) == (200, {"status": "ok"})
    status, models = call(url, "/v1/models", key=key)
    assert status == 200, models
    assert [m["id"] for m in models["data"]] == engine["names"]
    for served in engine["names"]:
        status, answer = call(url, "/v1/chat/completions", {**CHAT, "model": served}, key=key)
        assert status == 200, answer
        assert answer["object"] == "chat.completion"
        assert answer["model"] == served
        assert answer["choices"][0]["message"]["role"] == "assistant"
        assert answer["usage"]["completion_tokens"] == CHAT["max_tokens"]
        assert answer["usage"]["prompt_tokens"] > 0


def test_the_api_key_is_asked_of_every_request(real_engines: dict[str, Any]) -> None:
    engine = real_engines["engines"]["alias-key"]
    url, served = engine["url"], engine["names"][0]
    body = {**CHAT, "model": served}
    assert call(url, "/v1/chat/completions", body)[0] == 401
    assert call(url, "/v1/chat/completions", body, key="sk-wrong")[0] == 401
    assert call(url, "/v1/chat/completions", body, key=API_KEY)[0] == 200
    # The key never reaches the engine's command line or its log.
    assert API_KEY not in Path(engine["log"]).read_text(errors="replace")


def test_the_patch_file_is_the_engine_s_chat_template(real_engines: dict[str, Any]) -> None:
    engine = real_engines["engines"]["template"]
    status, props = call(engine["url"], "/props")
    assert status == 200, props
    assert props["chat_template"] == TEMPLATE.removesuffix(
        "\n"
    )  # the file's last newline is dropped
    manifest = json.loads((Path(engine["bundle"]) / "patches.manifest.json").read_text())
    assert [p["id"] for p in manifest["patches"]] == [realengines.TEMPLATE_PATCH]


def test_the_proxy_routes_every_name_to_its_real_engine(real_engines: dict[str, Any]) -> None:
    proxy = real_engines["proxy"]
    engines = real_engines["engines"]
    behind = [e for e in engines.values() if e["boot"]["gateway"]]
    expected = {n for e in behind for n in e["names"]} | {"templated-alias"}
    status, models = call(proxy, "/v1/models")
    assert status == 200, models
    assert sorted(m["id"] for m in models["data"]) == sorted(expected)
    for route in sorted(expected):
        status, answer = call(proxy, "/v1/chat/completions", {**CHAT, "model": route})
        assert status == 200, f"{route}: {answer}"
        assert answer["usage"]["completion_tokens"] == CHAT["max_tokens"], answer


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "KV_TYPE",
            "q9_0",
            "KV_TYPE must be one of: bf16 f16 f32 iq4_nl q4_0 q4_1 q5_0 q5_1 q8_0; got 'q9_0'",
        ),
        ("CTX_SIZE", "lots", "CTX_SIZE must be a whole number, got 'lots'"),
    ],
)
def test_a_bad_override_refuses_before_the_engine_starts(
    real_engines: dict[str, Any], tmp_path: Path, variable: str, value: str, message: str
) -> None:
    root = Path(real_engines["root"])
    registry = open_registry_cached(root)
    profile = registry.profiles["llamacpp-vibethinker-3b-single"]
    bundle = tmp_path / "bundle"
    write_bundle(bundle, bundle_files(registry, profile, render_profile(registry, profile)))
    (tmp_path / "models").mkdir()
    host = {"MODEL_DIR": str(tmp_path / "models"), variable: value}
    service = container.read_service(bundle, host)
    engine = registry.engines[profile.engine]
    done = container.run_to_end(
        service,
        engine=Path(real_engines["server"]["binary"]),
        engine_path=engine.binary,
        timeout=TIMEOUT,
    )
    # The guard's one line, and nothing of llama-server (it prints its build first thing).
    assert (done.code, done.stderr.decode(), done.stdout) == (1, f"profilegen: {message}\n", b"")
