"""`profilegen bench`: the server checked first, the canonical method run, the result recorded
as evidence that `show` and the generated catalogue display."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from profilegen.docs.catalog import num
from profilegen.registry import open_registry
from profilegen.render.context import served_names
from tests.support.cli import Invoke
from tests.support.openai_stub import StubEngine

from .paced import PacedEngine

PROFILE = "llamacpp-gemma-12b-single-q8kxl"
FAST = ("--warmups", "1", "--runs", "2", "--prefill", "2000", "--prefill-runs", "1")


@pytest.fixture
def engine(repo: Path) -> Iterator[StubEngine]:
    """The server under bench: the profile's served name and its context, as llama-server
    reports them (`/v1/models`, `/props`).

    SWITCH TO THE REAL ENGINE HERE: this is the OpenAI stub until the real-engine tier (a
    llama-server built from source, serving a small GGUF) is on main; then start that server
    for PROFILE's served name and context instead, and the tests below hold unchanged.
    """
    registry = open_registry(repo)
    profile = registry.profiles[PROFILE]
    names = served_names(registry, profile)
    with PacedEngine(
        "llama-server", names, context=profile.envelope.max_model_len, props=True
    ) as stub:
        yield stub


def test_a_server_that_is_not_the_profile_is_refused_before_anything_runs(
    invoke: Invoke,
) -> None:
    with StubEngine("vllm", ["some-other-model"]) as other:
        url = f"http://127.0.0.1:{other.port}"
        run = invoke("bench", url, "--profile", PROFILE, *FAST)
        assert run.code == 1, run.text
        assert run.err.startswith(
            f"error: the server at {url} serves some-other-model; {PROFILE} serves "
        )
        assert f"it is not this profile (another server on port {other.port}?)" in run.err
        assert other.asked_for() == []  # nothing was measured


def test_bench_records_evidence_that_show_and_the_catalogue_display(
    repo: Path, invoke: Invoke, engine: StubEngine
) -> None:
    url = f"http://127.0.0.1:{engine.port}"
    run = invoke("bench", url, "--profile", PROFILE, "--record", "--by", "@tester", "--rig",
                 "1x3090", *FAST)  # fmt: skip
    assert run.code == 0, run.text
    # Progress on stderr, the result on stdout.
    assert (
        f"bench: server at {url}: the server serves {engine.names[0]}, as {PROFILE} does" in run.err
    )
    assert "bench: narrative: run 2/2: 24 tokens in " in run.err
    assert re.search(r"^  narrative  wall +[0-9.]+ tok/s", run.out, re.M)
    assert "prefill    " in run.out and "method: bench (not the canonical counts)" in run.out
    # Every request used the pinned method: the asked-for name, pinned sampling, no thinking.
    asked = engine.requests
    assert len(asked) == 2 * (1 + 2) + 1
    assert {r["model"] for r in asked} == {engine.names[0]}
    assert all(r["temperature"] == 0.6 and r["top_k"] == 20 for r in asked)
    assert all(r["chat_template_kwargs"] == {"enable_thinking": False} for r in asked)

    data = YAML(typ="safe").load((repo / "registry/profiles" / f"{PROFILE}.yaml").read_text())
    record = data["evidence"][-1]
    assert (record["method"], record["contributor"], record["rig"]) == (
        "bench",
        "@tester",
        "1x3090",
    )
    assert record["source"].startswith(f"profilegen bench {url}: bench (not the canonical counts)")
    assert re.search(r"; run sha256 [0-9a-f]{16}$", record["source"])
    explained = json.loads(invoke("explain", PROFILE, "--format", "json").out)
    words = "\0".join([explained["exe"], *explained["argv"]])
    assert record["engine_command"] == hashlib.sha256(words.encode()).hexdigest()
    narrative = record["measured"]["decode_tps_narrative"]
    assert narrative > 0 and len(record["measured"]["ttft_ms"]) == 2
    assert "settings" not in record  # the server's context is the profile's

    shown = json.loads(invoke("show", PROFILE, "--format", "json").out)
    assert shown["evidence"][-1]["engine_command"] == record["engine_command"]
    assert invoke("render", "--all").code == 0
    catalog = (repo / "docs/CATALOG.md").read_text()
    row = next(line for line in catalog.splitlines() if f"[`{PROFILE}`]" in line)
    assert f"| {num(narrative)} / " in row and record["date"] in row
    page = (repo / "docs/benchmarks/gemma-4-12b.md").read_text()
    assert f"| `{PROFILE}` | {record['date']} | @tester |" in page


def test_a_server_started_with_another_context_is_recorded_with_that_setting(
    repo: Path, invoke: Invoke
) -> None:
    registry = open_registry(repo)
    names = served_names(registry, registry.profiles[PROFILE])
    with PacedEngine("vllm", names, context=32768) as stub:
        run = invoke("bench", f"http://127.0.0.1:{stub.port}", "--profile", PROFILE, "--record",
                     "--rig", "1x3090", "--prefill", "40000,2000", *FAST[:4], "--format", "json")  # fmt: skip
    assert run.code == 0, run.text
    result = json.loads(run.out)
    assert result["skipped"] == ["prefill at 40,000 tokens: the context is 32,768"]
    assert [p["prompt_tokens"] > 0 for p in result["prefill"]] == [True]
    assert (
        "its context is 32,768 tokens, not the profile's 262,144: recorded as a setting" in run.err
    )
    data = YAML(typ="safe").load((repo / "registry/profiles" / f"{PROFILE}.yaml").read_text())
    assert data["evidence"][-1]["settings"] == {"max_model_len": 32768}


def test_a_server_that_does_not_answer_is_exit_2(invoke: Invoke) -> None:
    run = invoke("bench", "http://127.0.0.1:9", "--profile", PROFILE, *FAST)
    assert run.code == 2
    assert run.err.startswith("error: http://127.0.0.1:9/v1/models: no answer (")


def test_a_bare_url_is_matched_to_the_profile_it_serves(invoke: Invoke, engine: StubEngine) -> None:
    url = f"http://127.0.0.1:{engine.port}"
    run = invoke("bench", url, *FAST)
    assert run.code == 0, run.text
    assert run.out.startswith(f"{PROFILE} at {url}, served as {engine.names[0]}\n")
