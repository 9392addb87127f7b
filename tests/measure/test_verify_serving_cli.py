"""`verify --serving` without an engine: its options, the identity check that comes first, and
a stream that does not end, against a stub server on 127.0.0.1 (the real engines' cases are in
tests/engines/test_verify_serving.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.cli import Invoke
from tests.support.openai_stub import StubEngine

SMALL = ("--context", "100", "--soak", "1x1", "--no-recall")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--soak", "0x2"), "takes CONVERSATIONSxTURNS such as 8x5 (each 1 to 999), not '0x2'"),
        (("--soak", "many"), "takes CONVERSATIONSxTURNS such as 8x5 (each 1 to 999), not 'many'"),
        (("--host",), "error: --serving checks a running server: --host, --strict and"),
        (("--model-dir", "/"), "error: --serving checks a running server: --host, --strict and"),
    ],
)
def test_bad_options_are_usage_errors(invoke: Invoke, args: tuple[str, ...], message: str) -> None:
    run = invoke("verify", "--serving", "http://127.0.0.1:9", *args)
    assert run.code == 2, run.text
    assert message in run.err


def test_verify_without_a_profile_or_serving_says_what_it_needs(invoke: Invoke) -> None:
    run = invoke("verify")
    assert (run.code, run.err) == (2, "error: verify needs a PROFILE (or --serving URL|PROFILE)\n")
    run = invoke("verify", "qwen38-27b-dual-dflash15-fast")
    assert (run.code, run.err) == (2, "error: Missing option '--model-dir' (or MODEL_DIR)\n")


def test_a_server_that_is_not_the_profile_is_refused_first(invoke: Invoke) -> None:
    with StubEngine("other", ["someone-else"]) as fake:
        url = f"http://127.0.0.1:{fake.port}"
        run = invoke("verify", "--serving", url, "--profile", "qwen38-27b-dual-dflash15-fast")
        assert run.code == 1, run.text
        assert "serves someone-else; qwen38-27b-dual-dflash15-fast serves qwen3.8-27b" in run.err
        assert all(path != "/v1/chat/completions" for path, _ in fake.calls), fake.calls


class Endless(StubEngine):
    """Streams its chunks and never says data: [DONE]."""

    def events(self, request: dict[str, Any], model: str) -> list[bytes]:
        return [e for e in super().events(request, model) if b"[DONE]" not in e]


def test_a_stream_without_done_fails_the_streaming_check(invoke: Invoke) -> None:
    with Endless("stub", ["stub-model"], context=4096) as fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", *SMALL)
    assert run.code == 1, run.text
    line = next(x for x in run.out.splitlines() if x.strip().startswith("streaming"))
    assert line.split()[:2] == ["streaming", "FAIL"]
    assert "the stream ended without data: [DONE] after" in line
    assert "FAILED: streaming" in run.out.splitlines()[-1]


class Gone(StubEngine):
    """Lists its model, then drops every chat request without an answer (a dead worker)."""

    def post(self, path: str, authorization: str | None, request: Any) -> tuple[int, Any]:
        raise ConnectionAbortedError("the worker is gone")


def test_a_server_that_stops_answering_fails_each_check_on_its_line(invoke: Invoke) -> None:
    with Gone("stub", ["stub-model"], context=4096) as fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", *SMALL)
    assert run.code == 1, run.text
    lines = {x.split()[0]: x for x in run.out.splitlines()[1:-1]}
    for name in ("chat", "tool-call", "streaming", "thinking", "long-context", "soak"):
        assert lines[name].split()[1] == "FAIL", lines[name]
    assert f"http://127.0.0.1:{fake.port}/v1/chat/completions: no answer (" in lines["chat"]
    assert run.out.splitlines()[-1] == (
        "verify: 1/7 checks passed; FAILED: chat, tool-call, streaming, thinking, "
        "long-context, soak"
    )


def test_the_long_prompt_is_sized_only_from_counts_that_grow(invoke: Invoke) -> None:
    # The stub counts one prompt token whatever it is sent.
    with StubEngine("stub", ["stub-model"], context=4096) as fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", *SMALL)
    line = next(x for x in run.out.splitlines() if x.strip().startswith("long-context"))
    assert line.split()[:2] == ["long-context", "FAIL"]
    assert line.endswith(
        "calibration prompt: the server counted 1 and 1 prompt tokens for a text and twice "
        "that text: its counts cannot size the prompt"
    )


def test_a_server_that_does_not_say_its_context_needs_one_given(invoke: Invoke) -> None:
    with StubEngine("stub", ["stub-model"]) as fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", "--soak", "1x1")
    line = next(x for x in run.out.splitlines() if x.strip().startswith("long-context"))
    assert line.split()[:2] == ["long-context", "FAIL"]
    assert line.endswith("the server does not say its context: give --context N")


class OddCalls(StubEngine):
    """Answers a tools request with the call it was built with."""

    def __init__(self, call: Any, finish: Any = "tool_calls") -> None:
        super().__init__("stub", ["stub-model"], context=4096)
        self.call, self.finish = call, finish

    def post(self, path: str, authorization: str | None, request: Any) -> tuple[int, Any]:
        status, answer = super().post(path, authorization, request)
        if status == 200 and isinstance(request, dict) and request.get("tools"):
            answer["choices"][0]["message"]["tool_calls"] = [self.call]
            answer["choices"][0]["finish_reason"] = self.finish
        return status, answer


def _tool_line(invoke: Invoke, fake: StubEngine) -> str:
    with fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", *SMALL)
    assert run.code == 1, run.text
    return next(x for x in run.out.splitlines() if x.strip().startswith("tool-call"))


def test_a_call_whose_function_is_no_object_fails_the_check(invoke: Invoke) -> None:
    line = _tool_line(invoke, OddCalls({"function": "get_weather"}))
    assert line.split()[:2] == ["tool-call", "FAIL"]
    assert line.endswith("the call's function is not an object: get_weather")


def test_a_call_of_a_long_odd_name_is_shown_brief_on_one_line(invoke: Invoke) -> None:
    name = "\x1b[2Jx\n" * 5000
    line = _tool_line(invoke, OddCalls({"function": {"name": name, "arguments": "{}"}}))
    assert line.split()[:2] == ["tool-call", "FAIL"]
    assert "\x1b" not in line and len(line) < 200, line
    assert line.endswith(", not get_weather")


def test_an_odd_finish_reason_is_shown_brief_on_one_line(invoke: Invoke) -> None:
    call = {"function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    line = _tool_line(invoke, OddCalls(call, finish="\x1b]0;x\x07" * 5000))
    assert line.split()[:2] == ["tool-call", "FAIL"]
    assert "\x1b" not in line and len(line) < 200, line
    assert line.endswith(", not tool_calls")


def test_the_names_a_server_chose_are_shown_on_one_line(invoke: Invoke) -> None:
    names = ["stub\x1b[2J\nforged", "x" * 500]
    with StubEngine("stub", names, context=4096) as fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", *SMALL)
    line = next(x for x in run.out.splitlines() if x.strip().startswith("identity"))
    assert line.endswith("serves stub?[2J?forged, " + "x" * 77 + "..."), line
    assert "\x1b" not in run.out and "\x1b" not in run.err


class Counting(StubEngine):
    """Counts a prompt's tokens as a character in `per` (its calibration says so)."""

    def __init__(self, context: int, per: int = 4) -> None:
        super().__init__("stub", ["stub-model"], context=context)
        self.per = per

    def post(self, path: str, authorization: str | None, request: Any) -> tuple[int, Any]:
        status, answer = super().post(path, authorization, request)
        if status == 200:
            text = "".join(str(m.get("content", "")) for m in request["messages"])
            answer["usage"]["prompt_tokens"] = len(text) // self.per
        return status, answer


@pytest.mark.parametrize(
    ("context", "per", "said"),
    [
        (10**400, 4, "the server does not say its context: give --context N"),
        (
            2**32,
            4,
            "a prompt of about 3,865,470,566 tokens is 198,229,258 sentences by the server's counts (19.5 tokens each), past the 1,048,576 a probe sends (give --context N)",
        ),
        (
            1_000_000,
            400,
            "a prompt of about 900,000 tokens is 4,500,000 sentences by the server's counts (0.2 tokens each), past the 1,048,576 a probe sends (give --context N)",
        ),
    ],
)
def test_a_context_or_count_no_prompt_can_fill_fails_the_check(
    invoke: Invoke, context: int, per: int, said: str
) -> None:
    with Counting(context, per) as fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", "--soak", "1x1")
    assert run.code == 1, run.text
    line = next(x for x in run.out.splitlines() if x.strip().startswith("long-context"))
    assert line.split()[:2] == ["long-context", "FAIL"]
    assert line.endswith(said), line


def test_a_request_timeout_past_a_day_is_a_usage_error(invoke: Invoke) -> None:
    run = invoke("verify", "--serving", "http://127.0.0.1:9", "--request-timeout", "1e300")
    assert run.code == 2, run.text
    assert (
        "Invalid value for '--request-timeout': 1e+300 is not in the range 0<x<=86400.0." in run.err
    )


def test_a_bare_url_reads_the_servers_models_once(invoke: Invoke) -> None:
    with Counting(4096) as fake:
        run = invoke("verify", "--serving", f"http://127.0.0.1:{fake.port}", *SMALL)
    assert run.code == 0, run.text
    assert [path for path, _ in fake.calls if path == "/v1/models"] == ["/v1/models"]
