"""`verify --serving` against the session's real servers: the real llama-server booted through
its profile's rendered entrypoint, and the real vLLM (its CPU build) where that tier boots.
It passes against them, and fails naming the tool-call check against a real llama-server
started with its chat parser off (`--no-jinja`) and a real vLLM booted from the same profile
without its tool parser. The tiny models' weights are random: recall is reported, not judged
(`--no-recall`), and the soak is two conversations of two turns."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from profilegen.registry.cached import open_registry_cached
from tests.support import realengines, realvllm
from tests.support.cli import invoke_in
from tests.support.container import free_port, wait_healthy
from tests.support.ready import wait_ready

PROFILE = "llamacpp-vibethinker-3b-single"
SMALL = ("--context", "300", "--soak", "2x2", "--no-recall", "--request-timeout", "120")
CHECKS = [
    "identity",
    "chat",
    "tool-call",
    "streaming",
    "thinking",
    "long-context",
    "recall",
    "soak",
]


def _verify(root: Path, url: str, *args: str) -> Any:
    return invoke_in(root, "verify", "--serving", url, *SMALL, *args)


def _statuses(out: str) -> dict[str, str]:
    found = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] in CHECKS:
            found[words[0]] = words[1]
    return found


@pytest.fixture
def keyed(real_engines: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    engine: dict[str, Any] = real_engines["engines"]["alias-key"]
    monkeypatch.setenv("API_KEY", engine["boot"]["api_key"])
    return engine


def test_the_real_llama_server_passes(real_engines: dict[str, Any], keyed: dict[str, Any]) -> None:
    run = _verify(Path(real_engines["root"]), keyed["url"])
    assert run.code == 0, run.text
    statuses = _statuses(run.out)
    assert list(statuses) == CHECKS, run.out
    # Judged: the server's own work. The tiny template has no tool calls and no thinking
    # switch, and random weights call no tool and think nothing on their own: not judged.
    assert {k: statuses[k] for k in ("identity", "chat", "streaming", "long-context", "soak")} == {
        k: "PASS" for k in ("identity", "chat", "streaming", "long-context", "soak")
    }
    assert (statuses["tool-call"], statuses["thinking"], statuses["recall"]) == (
        "SKIP",
        "SKIP",
        "INFO",
    )
    assert f"{PROFILE} at {keyed['url']}" in run.out
    assert "4/4 turns answered (2 conversations x 2 turns at once)" in run.out
    assert run.out.splitlines()[-1] == "verify: 5/5 checks passed; all judged checks passed"


def test_json_and_the_record(
    real_engines: dict[str, Any], keyed: dict[str, Any], tmp_path: Path
) -> None:
    shutil.copytree(Path(real_engines["root"]) / "registry", tmp_path / "registry")
    rig = open_registry_cached(tmp_path).profiles[PROFILE].rig
    # Credentials in the URL are used (here: ignored by the engine) and never stored or shown.
    url = keyed["url"].replace("http://", "http://someone:hunter2@")
    run = _verify(tmp_path, url, "--format", "json", "--record", "--rig", rig, "--by", "@tester")
    assert run.code == 0, run.text
    doc = json.loads(run.out)
    assert doc["ok"] is True
    assert doc["passed"] == "5/5"
    assert doc["url"] == keyed["url"]
    assert [c["name"] for c in doc["checks"]] == CHECKS
    assert doc["context_filled"] >= 240
    assert "hunter2" not in run.text and keyed["boot"]["api_key"] not in run.text
    registry = open_registry_cached(tmp_path)
    (record,) = [e for e in registry.profiles[PROFILE].evidence if e.method == "verify"]
    assert record.rig == rig
    assert record.contributor == "@tester"
    assert record.measured.verify_full == "5/5"
    assert record.measured.soak == "pass"
    assert record.measured.max_context_filled == doc["context_filled"]
    assert record.source.startswith(f"profilegen verify --serving {keyed['url']}: 8 checks, soak")
    assert record.engine_command is not None
    text = (tmp_path / "registry" / "profiles" / f"{PROFILE}.yaml").read_text()
    assert "hunter2" not in text and keyed["boot"]["api_key"] not in text
    assert "recorded in registry/profiles/" in run.err


@pytest.fixture
def no_jinja(real_engines: dict[str, Any], tmp_path: Path) -> Iterator[str]:
    """The real llama-server of the session's build on the same tiny model, under the
    profile's served name, with its Jinja chat templates (and so its tool-call parsing) off."""
    name = real_engines["engines"]["alias-key"]["names"][0]
    port = free_port()
    log = tmp_path / "server.log"
    argv = [real_engines["server"]["binary"], "-m", real_engines["tiny"], "--alias", name,
            "--host", "127.0.0.1", "--port", str(port), "-c", "2048", "--no-jinja"]  # fmt: skip
    env = {**os.environ, "OMP_WAIT_POLICY": realengines.ENGINE_ENV["OMP_WAIT_POLICY"]}
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(proc, f"{url}/health", log, 120.0, "llama-server --no-jinja")
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_server_without_its_tool_parser_fails_naming_the_check(
    real_engines: dict[str, Any], no_jinja: str
) -> None:
    run = _verify(Path(real_engines["root"]), no_jinja, "--profile", PROFILE)
    assert run.code == 1, run.text
    line = next(x for x in run.out.splitlines() if x.strip().startswith("tool-call"))
    assert line.split()[:2] == ["tool-call", "FAIL"]
    assert (
        "a tools request with tool_choice auto was refused (HTTP 500: "
        '{"error":{"code":500,"message":"tools param requires --jinja flag"'
    ) in line
    assert "the tool parser is off (vLLM: --enable-auto-tool-choice --tool-call-parser; " in line
    assert run.out.splitlines()[-1] == "verify: 5/6 checks passed; FAILED: tool-call"


def test_the_real_vllm_passes_with_its_tool_parser_judged(real_vllm: dict[str, Any]) -> None:
    """The a3b boot: its random weights say text (the reference boot's say only special tokens,
    which verify reports as empty answers, rightly: a server whose answers are empty fails)."""
    engine = real_vllm["engines"]["a3b"]
    assert engine["boot"]["api_key"] is None
    run = _verify(Path(real_vllm["root"]), engine["url"])
    assert run.code == 0, run.text
    statuses = _statuses(run.out)
    # vLLM's structured outputs force the call in the qwen3_coder parser's format, and the
    # reasoning parser separates the random answer as thinking: both are judged.
    assert statuses == {**{k: "PASS" for k in CHECKS}, "recall": "INFO"}, run.out
    assert "the forced call came back parsed: get_weather" in run.out


A3B = "qwen-35b-a3b-dual-nvfp4-fast"


def _without_tool_parser(root: Path, port: int) -> None:
    """The a3b profile of a copy of the tier's registry, its tool parser taken out."""
    path = root / "registry" / "profiles" / f"{A3B}.yaml"
    text = path.read_text()
    for line in ("  auto_tool_choice: true\n", "  tool_call_parser: qwen3_coder\n"):
        assert line in text, line
        text = text.replace(line, "")
    lines = text.splitlines(keepends=True)
    path.write_text("".join(f"port: {port}\n" if x.startswith("port: ") else x for x in lines))


@pytest.fixture
def vllm_without_tool_parser(real_vllm: dict[str, Any], tmp_path: Path) -> Iterator[str]:
    """The real vLLM of the tier, booted as the tier boots the a3b profile, from a profile that
    differs only in having no tool parser (no --enable-auto-tool-choice, --tool-call-parser)."""
    from profilegen.releases.vllm_env import ensure_env

    shutil.copytree(Path(real_vllm["root"]) / "registry", tmp_path / "root" / "registry")
    _without_tool_parser(tmp_path / "root", free_port())
    registry = open_registry_cached(tmp_path / "root")
    (boot,) = [b for b in realvllm.BOOTS if b.profile == A3B]
    boot = dataclasses.replace(boot, name="no-tool-parser")
    # A short folder: the box publishes its port through a socket file there (108 bytes).
    work = Path(tempfile.mkdtemp(prefix="pg-vllm-"))
    running, engine = realvllm._boot(registry, tmp_path / "root", boot, ensure_env(), work)
    try:
        wait_healthy(running, realvllm.BOOT_WITHIN)
        assert "tool_call_parser" not in Path(engine.log).read_text(errors="replace")
        yield engine.url
    finally:
        running.stop()
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.slow  # a third vLLM boot (~10 s of CPU): the llama-server case runs in every suite
def test_a_vllm_without_its_tool_parser_fails_naming_the_check(
    real_vllm: dict[str, Any], vllm_without_tool_parser: str
) -> None:
    # The tier's registry says what the profile serves: its tool parser among it.
    run = _verify(Path(real_vllm["root"]), vllm_without_tool_parser, "--profile", A3B)
    assert run.code == 1, run.text
    line = next(x for x in run.out.splitlines() if x.strip().startswith("tool-call"))
    assert line.split()[:2] == ["tool-call", "FAIL"]
    assert "a tools request with tool_choice auto was refused (HTTP 400: " in line
    assert "--enable-auto-tool-choice and --tool-call-parser to be set" in line
    assert run.out.splitlines()[-1] == "verify: 6/7 checks passed; FAILED: tool-call"
