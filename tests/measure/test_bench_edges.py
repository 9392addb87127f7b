"""`bench` against a server or a command line that is not what it should be: a token count
past any context, a host with a space, a key with a line break. Each is a clear error (exit
2), never a traceback, and a key is never shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from profilegen.registry import open_registry
from profilegen.render.context import served_names
from tests.support.cli import Invoke
from tests.support.openai_stub import StubEngine

SINGLE = "llamacpp-gemma-12b-single-q8kxl"
FAST = ("--warmups", "0", "--runs", "1")
HUGE = "9" * 400  # a whole number JSON reads, and no float can hold


def names(repo: Path) -> list[str]:
    registry = open_registry(repo)
    return served_names(registry, registry.profiles[SINGLE])


class Scripted(StubEngine):
    """Streams the `data:` payloads it is given, whatever they are."""

    def __init__(self, *args: Any, payloads: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.payloads = payloads

    def events(self, request: dict[str, Any], model: str) -> list[bytes]:
        return [f"data: {p}\n\n".encode() for p in self.payloads]


@pytest.mark.parametrize(
    ("usage", "prefill", "name"),
    [
        (f'{{"completion_tokens": {HUGE}}}', "none", "completion_tokens"),
        (f'{{"completion_tokens": 3, "prompt_tokens": {HUGE}}}', "512", "prompt_tokens"),
        (f'{{"completion_tokens": {2**32 + 1}}}', "none", "completion_tokens"),
    ],
)
def test_a_token_count_past_any_context_is_no_count(
    repo: Path, invoke: Invoke, usage: str, prefill: str, name: str
) -> None:
    payloads = ['{"choices": [{"delta": {"content": "a"}}]}', f'{{"usage": {usage}}}', "[DONE]"]
    with Scripted("llama-server", names(repo), payloads=payloads) as bad:
        run = invoke("bench", f"http://127.0.0.1:{bad.port}", "--profile", SINGLE, *FAST,
                     "--prefill", prefill, "--prefill-runs", "1")  # fmt: skip
    assert run.code == 2, run.text
    assert (
        f"/v1/chat/completions: event 2 of the stream has a usage.{name} that is not a token "
        "count: " in run.err
    )
    assert "internal error" not in run.text


def test_a_host_with_a_space_is_a_usage_error(invoke: Invoke) -> None:
    run = invoke("bench", "http://a b:80", "--timeout", "2")
    assert run.code == 2, run.text
    assert run.err == (
        "error: http://a b:80 is not an http(s) URL of a server (a space or control character "
        "in its host)\n"
    )


@pytest.mark.parametrize("key", ["k3y\nX-Injected: 1", "k3y\u20ac"])
def test_a_key_no_header_can_carry_is_refused_unshown(
    repo: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("API_KEY", key)
    with StubEngine("llama-server", names(repo)) as eng:
        run = invoke("bench", f"http://127.0.0.1:{eng.port}", "--profile", SINGLE, *FAST,
                     "--prefill", "none")  # fmt: skip
        calls = list(eng.calls)
    assert run.code == 2, run.text
    assert run.err == (
        "error: API_KEY holds a character that is not printable ASCII (a line break?): an HTTP "
        "header cannot carry it (the key is not shown)\n"
    )
    assert "k3y" not in run.text
    assert calls == []
