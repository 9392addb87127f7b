"""`bench` against a server or a command line that is not what it should be: a token count
past any context, a host with a space, a key with a line break, an answer trickled a byte at a
time, a broken status line. Each is a clear error (exit 2) on one line, never a traceback or a
wait past --timeout, and a key is never shown."""

from __future__ import annotations

import json
import socket
import threading
import time
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


@pytest.mark.parametrize("host", ["a..b", "a" * 300, "."])
def test_a_host_no_resolver_takes_is_a_usage_error(invoke: Invoke, host: str) -> None:
    run = invoke("bench", f"http://{host}:80", "--timeout", "2")
    assert run.code == 2, run.text
    assert run.err == (
        f"error: http://{host}:80 is not an http(s) URL of a server (its host has an empty label "
        "or one longer than 63 characters)\n"
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


class Trickle:
    """A server on 127.0.0.1 that answers /v1/models at once and trickles, a byte every 0.2 s
    for about 30 s, either its status line (`status`) or a stream's first event (`event`);
    `hung_up` says whether the client left before the trickle was done."""

    def __init__(self, part: str, model: str) -> None:
        self.part = part
        self.model = model
        self.hung_up = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            path = head.split(b" ")[1]
            if path == b"/v1/models" and self.part == "event":
                body = json.dumps({"data": [{"id": self.model}]}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                return
            if path == b"/v1/models":
                slow = b"HTTP/1.1 200 O" + b"K" * 150 + b"\r\n\r\n"
            elif path == b"/v1/chat/completions" and self.part == "event":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
                slow = b'data: {"choices": [' + b" " * 150 + b"]}\n\n"
            else:
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                return
            try:
                for byte in slow:
                    conn.sendall(bytes([byte]))
                    time.sleep(0.2)
            except OSError:
                self.hung_up.set()

    def close(self) -> None:
        self.server.close()


@pytest.mark.parametrize(
    ("part", "path"), [("status", "/v1/models"), ("event", "/v1/chat/completions")]
)
def test_a_server_trickling_its_answer_is_left_at_the_timeout(
    repo: Path, invoke: Invoke, part: str, path: str
) -> None:
    server = Trickle(part, names(repo)[0])
    try:
        run = invoke("bench", f"http://127.0.0.1:{server.port}", "--profile", SINGLE, *FAST,
                     "--prefill", "none", "--timeout", "1")  # fmt: skip
        assert server.hung_up.wait(5)  # the client left, not the trickle ended
    finally:
        server.close()
    assert run.code == 2, run.text
    assert run.err.endswith(
        f"error: http://127.0.0.1:{server.port}{path}: no complete answer within the --timeout "
        "of 1 s\n"
    )


def test_a_status_line_the_server_breaks_is_shown_on_one_line(invoke: Invoke) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 \x1b[31mforged\r\n\r\n")

        threading.Thread(target=answer, daemon=True).start()
        run = invoke("bench", f"http://127.0.0.1:{port}", "--timeout", "5")
    assert run.code == 2, run.text
    assert (
        run.err == f"error: http://127.0.0.1:{port}/v1/models: no answer (HTTP/1.1  [31mforged)\n"
    )


def test_a_timeout_past_a_day_is_a_usage_error(invoke: Invoke) -> None:
    run = invoke("bench", "http://127.0.0.1:9", "--timeout", "1e300")
    assert run.code == 2, run.text
    assert "Invalid value for '--timeout': 1e+300 is not in the range 0<x<=86400.0." in run.err
