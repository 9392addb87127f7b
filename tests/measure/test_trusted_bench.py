"""`bench` records only what a rig can physically do, once, on the rig it ran on, without
credentials; a server's malformed answer or a slow one is a clear error, never a traceback."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilegen.errors import UsageError
from profilegen.hub.stream import BadStream, StreamReader
from profilegen.measure.machine import Card, Machine
from profilegen.measure.record import record_rig
from profilegen.registry import open_registry
from profilegen.render.context import served_names
from tests.support.cli import Invoke
from tests.support.openai_stub import StubEngine

from .paced import PacedEngine

DUAL = "qwen38-27b-dual-fast"  # Qwen3.8 27B, MTP, two 3090s
SINGLE = "llamacpp-gemma-12b-single-q8kxl"
FAST = ("--warmups", "0", "--runs", "1", "--prefill", "none")


def names(repo: Path, profile: str) -> list[str]:
    registry = open_registry(repo)
    return served_names(registry, registry.profiles[profile])


def profile_text(repo: Path, profile: str) -> str:
    return (repo / "registry/profiles" / f"{profile}.yaml").read_text()


class Scripted(StubEngine):
    """Streams the `data:` payloads it is given, whatever they are."""

    def __init__(self, *args: Any, payloads: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.payloads = payloads

    def events(self, request: dict[str, Any], model: str) -> list[bytes]:
        return [f"data: {p}\n\n".encode() for p in self.payloads]


def test_a_server_faster_than_the_rig_can_be_is_not_recorded(repo: Path, invoke: Invoke) -> None:
    before = profile_text(repo, DUAL)
    with StubEngine("vllm", names(repo, DUAL), tokens=512) as fake:  # 512 tokens in ms
        run = invoke("bench", f"http://127.0.0.1:{fake.port}", "--profile", DUAL, "--record",
                     "--rig", "2x3090-pcie", *FAST)  # fmt: skip
    assert run.code == 1, run.text
    assert "\nerror: not recorded: decode_tps_narrative " in run.err
    assert "tok/s is past the physical bound of 1,377 tok/s (" in run.err
    assert (
        "for 2x NVIDIA GeForce RTX 3090: 1,872 GB/s of memory bandwidth over 18.36 GB read per "
        "weight pass (active weights 18.36 GB, KV 0.00 GB), at most 9 tokens a pass (drafter "
        "qwen-mtp-builtin drafts at most 8 + 1); ideal 918 tok/s x 1.5 margin" in run.err
    )
    assert "No 2x3090-pcie can serve qwen38-27b-dual-fast this fast" in run.err
    assert "Traceback" not in run.text
    assert profile_text(repo, DUAL) == before  # nothing written


def test_a_measured_speed_of_the_catalogue_still_records(repo: Path, invoke: Invoke) -> None:
    # 24 tokens at 20 ms each: ~50 tok/s, what a 12B Q8 on one 3090 does (catalogue: 51.4).
    with PacedEngine("llama-server", names(repo, SINGLE), context=262144, props=True) as eng:
        run = invoke("bench", f"http://127.0.0.1:{eng.port}", "--profile", SINGLE, "--record",
                     "--rig", "1x3090", *FAST)  # fmt: skip
    assert run.code == 0, run.text
    assert "bench: recorded in registry/profiles/" in run.err


def test_the_same_run_is_recorded_once(repo: Path) -> None:
    from profilegen.commands.bench import _record
    from profilegen.hub.serving import Endpoint
    from profilegen.measure.identity import identify
    from profilegen.measure.method import Method
    from profilegen.measure.run import run_bench

    registry = open_registry(repo)
    with PacedEngine("llama-server", names(repo, SINGLE), context=262144, props=True) as eng:
        endpoint = Endpoint.parse(f"http://127.0.0.1:{eng.port}", None, 30)
        identity = identify(registry, registry.profiles[SINGLE], endpoint)
        result = run_bench(endpoint, identity.model, Method(0, 1, ()), None, lambda _: None)
    _record(registry, identity, result, endpoint.url, None, "1x3090", None, None)
    once = profile_text(repo, SINGLE)
    _record(open_registry(repo), identity, result, endpoint.url, None, "1x3090", None, None)
    assert profile_text(repo, SINGLE) == once


def test_credentials_in_the_url_are_used_never_stored_or_shown(repo: Path, invoke: Invoke) -> None:
    with PacedEngine("llama-server", names(repo, SINGLE), context=262144, props=True) as eng:
        url = f"http://bob:hunter2@127.0.0.1:{eng.port}/v1?api_key=s3cret"
        run = invoke("bench", url, "--profile", SINGLE, "--record", "--rig", "1x3090", *FAST)
        headers = eng.headers
    assert run.code == 0, run.text
    assert "hunter2" not in run.text and "s3cret" not in run.text and "bob" not in run.text
    text = profile_text(repo, SINGLE)
    assert "hunter2" not in text and "bob:" not in text
    assert f"profilegen bench http://127.0.0.1:{eng.port}: " in text
    assert f"Basic {base64.b64encode(b'bob:hunter2').decode()}" in headers


@pytest.mark.parametrize(
    ("payloads", "message"),
    [
        (["[1,2]"], "event 1 of the stream is not a JSON object: [1,2]"),
        (['{"choices": ["x"]}'], "event 1 of the stream has a choice that is not an object"),
        (['{"choices": {"a": 1}}'], "has choices that are not a list"),
        (['{"choices": [{"delta": "x"}]}'], "has a delta that is not an object"),
        (['{"usage": [3]}'], "has a usage that is not an object"),
        (
            ['{"choices": [], "usage": {"completion_tokens": true}}'],
            "has a usage.completion_tokens that is not a token count",
        ),
        (['{"usage": {"completion_tokens": -5}}'], "usage.completion_tokens that is not a token"),
        (['{"usage": {"prompt_tokens": 1.5}}'], "usage.prompt_tokens that is not a token count"),
        (["{not json"], "event 1 of the stream is not JSON: {not json"),
    ],
)
def test_a_malformed_stream_is_a_clear_error(
    repo: Path, invoke: Invoke, payloads: list[str], message: str
) -> None:
    with Scripted("vllm", names(repo, DUAL), payloads=payloads) as bad:
        run = invoke("bench", f"http://127.0.0.1:{bad.port}", "--profile", DUAL, *FAST)
    assert run.code == 2, run.text
    assert f"\nerror: http://127.0.0.1:{bad.port}/v1/chat/completions: " in run.err
    assert message in run.err and "(not an OpenAI-compatible stream)" in run.err
    assert "Traceback" not in run.text


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999", "ftp://x"])
def test_a_url_that_cannot_be_read_is_a_usage_error(invoke: Invoke, url: str) -> None:
    run = invoke("bench", url, "--profile", DUAL, *FAST)
    assert run.code == 2, run.text
    assert "is not an http(s) URL of a server" in run.err and "Traceback" not in run.text


def test_the_timeout_bounds_the_whole_request(repo: Path, invoke: Invoke) -> None:
    # A token every 0.5 s for 60 tokens: each read is quick, the answer takes 30 s.
    with PacedEngine("vllm", names(repo, DUAL), tokens=60, token_s=0.5) as slow:
        run = invoke("bench", f"http://127.0.0.1:{slow.port}", "--profile", DUAL, "--timeout",
                     "1.5", *FAST)  # fmt: skip
    assert run.code == 2, run.text
    assert (
        f"\nerror: http://127.0.0.1:{slow.port}/v1/chat/completions: no complete answer within "
        "the --timeout of 1.5 s\n" in run.err
    )
    helped = invoke("bench", "--help")
    assert "Limit for each request as a whole: connecting and every byte of" in " ".join(
        helped.out.split()
    )


@pytest.mark.parametrize(
    ("by", "message"),
    [
        ("@a\n::error::forged", "takes a name or @handle without control characters or newlines"),
        ("@a\x1b[31m", "takes a name or @handle without control characters or newlines"),
        ("@" + "x" * 80, "takes at most 64 characters, not 81"),
    ],
)
def test_by_is_one_short_line(invoke: Invoke, by: str, message: str) -> None:
    run = invoke("bench", "http://127.0.0.1:9", "--by", by, *FAST)
    assert run.code == 2
    assert f"Invalid value for '--by': {message}" in run.err


def test_a_record_needs_the_rig_the_server_ran_on(repo: Path, invoke: Invoke) -> None:
    """No GPU on this machine: the profile's rig is not taken for the machine's."""
    before = profile_text(repo, SINGLE)
    with PacedEngine("llama-server", names(repo, SINGLE), context=262144, props=True) as eng:
        run = invoke("bench", f"http://127.0.0.1:{eng.port}", "--profile", SINGLE, "--record",
                     *FAST)  # fmt: skip
    assert run.code == 2, run.text
    assert "no GPU was read on this machine (" in run.err
    assert "name the rig the server runs on with --rig" in run.err
    assert profile_text(repo, SINGLE) == before


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "choices",
                        "delta",
                        "usage",
                        "content",
                        "completion_tokens",
                        "prompt_tokens",
                        "reasoning_content",
                        "x",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),  # fmt: skip
        max_leaves=12,
    )
)
def test_any_json_event_is_read_or_refused(value: Any) -> None:
    reader = StreamReader("http://127.0.0.1:1/v1/chat/completions", 0.0)
    try:
        reader.feed(b"data: " + json.dumps(value).encode() + b"\n")
    except BadStream as exc:
        assert "(not an OpenAI-compatible stream)" in str(exc)
    result = reader.result()
    assert result.completion_tokens >= 0
    assert result.prompt_tokens is None or result.prompt_tokens >= 0


def test_a_name_the_server_chose_is_printed_on_one_line(invoke: Invoke) -> None:
    with StubEngine("vllm", ["x\n::error::forged\x1b[31m"]) as other:
        run = invoke("bench", f"http://127.0.0.1:{other.port}", "--profile", DUAL, *FAST)
    assert run.code == 1, run.text
    assert "serves x?::error::forged?[31m; " in run.err
    assert "\n::error" not in run.err and "\x1b" not in run.err


def test_a_bare_url_names_what_it_serves_on_one_line(invoke: Invoke) -> None:
    with PacedEngine("vllm", ["odd\nname"], token_s=0.0) as other:
        run = invoke("bench", f"http://127.0.0.1:{other.port}", *FAST)
    assert run.code == 0, run.text
    assert "no registry profile serves odd?name" in run.err
    assert "served as odd?name\n" in run.out


def _machine(name: str, mib: int, count: int = 1) -> Machine:
    card = Card(name, mib << 20, None, None, None, None)
    return Machine((card,) * count, "560.35")


def test_the_rig_is_the_machine_cards_never_the_profile_default(repo: Path) -> None:
    registry = open_registry(repo)
    h200 = _machine("NVIDIA H200", 143771)
    assert record_rig(registry, h200, "read through NVML", None, local=True) == "1xh200"
    with pytest.raises(UsageError) as other:
        record_rig(registry, h200, "read through NVML", "1x3090", local=True)
    assert str(other.value) == (
        "--rig 1x3090 is not this machine's cards (1x NVIDIA H200, rig 1xh200): the server on "
        "this machine runs on its cards"
    )
    with pytest.raises(UsageError) as unknown:
        record_rig(registry, _machine("NVIDIA GeForce RTX 3090", 24576, 3), "", None, local=True)
    assert str(unknown.value) == (
        "this machine's cards (3x NVIDIA GeForce RTX 3090) are no registry rig's: add the rig "
        "under registry/rigs/ to record a run on it"
    )
    with pytest.raises(UsageError) as remote:
        record_rig(registry, h200, "", None, local=False)
    assert "the server is not on this machine" in str(remote.value)
    assert record_rig(registry, None, "", "2x3090", local=False) == "2x3090-pcie"


def test_reasoning_and_tool_call_pieces_are_tokens_as_they_arrive() -> None:
    """vLLM 0.27 streams the reasoning parser's share as `reasoning` (older servers:
    `reasoning_content`): the first token is the first of any of them, and each is counted."""
    reader = StreamReader("http://127.0.0.1:1/v1/chat/completions", 0.0)
    deltas = [{"reasoning": "hm"}, {"reasoning_content": "so"}, {"content": "ok"},
              {"tool_calls": [{"index": 0}]}, {"role": "assistant"}]  # fmt: skip
    for delta in deltas:
        event = {"choices": [{"delta": delta}]}
        reader.feed(b"data: " + json.dumps(event).encode() + b"\n")
    assert reader.first is not None
    result = reader.result()
    assert result.completion_tokens == 4 and not result.counted_by_server
    assert result.ttft_s < result.wall_s
