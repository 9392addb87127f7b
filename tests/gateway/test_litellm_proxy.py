"""The real LiteLLM proxy, run with a generated config.yaml, in front of stub engines that answer
to exactly the names each member's rendered compose gives its engine: one chat request per
route reaches the right engine with a name it serves. One proxy start for the whole module, in
one test (so that parallel workers cannot start a second one); test_gateway.py shows a wrong
alias refused by `check` before anything is generated."""

from __future__ import annotations

import json
import re
import shutil
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from profilegen.explain.core import Scenario, explain
from profilegen.model.gateway import LITELLM_IMAGE
from profilegen.registry.cached import open_registry_cached
from tests.support.cli import invoke_in
from tests.support.litellm import proxy_binary, start_proxy, wait_proxy
from tests.support.openai_stub import StubEngine
from tests.support.ready import tail
from tests.support.repo import REPO

ESTATE = "qwen38-dual-estate"
REQUEST_TIMEOUT = 15.0
ENGINE_KEY = "sk-engine-test-5b1e"


def engine_names(exe: str | None, argv: tuple[str, ...]) -> list[str]:
    """The names an engine answers to, read from the argv its entrypoint really runs."""
    words = list(argv)
    for flag in ("--served-model-name", "--alias"):
        if flag in words:
            rest = words[words.index(flag) + 1 :]
            names = []
            for word in rest:
                if word.startswith("-"):
                    break
                names.append(word)
            return names
    for flag in ("-m", "--model", "--model-path"):
        if flag in words:  # no name given: the engine answers to what it loaded
            return [words[words.index(flag) + 1]]
    raise AssertionError(f"{exe}: no model in {argv}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _move_port(root: Path, profile: str, port: int) -> None:
    """The member listens on a free port here (its own file sets `port:`)."""
    path = root / "registry" / "profiles" / f"{profile}.yaml"
    text, count = re.subn(r"(?m)^port: \d+$", f"port: {port}", path.read_text(encoding="utf-8"))
    assert count == 1, f"{path.name} does not set its port once"
    path.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class Expected:
    """Where a route must land: the stub of this profile, asked for this name."""

    profile: str
    served: str


@dataclass
class Estate:
    url: str
    stubs: dict[str, StubEngine]
    expected: dict[str, Expected]
    log: Path
    startup_s: float


def _expected_routes(root: Path, stubs: dict[str, StubEngine]) -> dict[str, Expected]:
    """Route name -> destination, from the engines' argv and the profiles' gateway aliases."""
    registry = open_registry_cached(root)
    expected: dict[str, Expected] = {}
    for ident, stub in stubs.items():
        for name in stub.names:
            expected[name] = Expected(ident, name)
        for alias in registry.profiles[ident].serve.gateway_aliases:
            expected.setdefault(alias, Expected(ident, stub.names[0]))
    return expected


def _start_stubs(root: Path, stack: ExitStack) -> dict[str, StubEngine]:
    registry = open_registry_cached(root)
    stubs = {}
    for member in registry.gateways[ESTATE].members:
        profile = registry.profiles[member.profile]
        run = explain(registry, profile, Scenario())
        assert run.exit_code is None, f"{profile.id} does not start: {run.message}"
        names = engine_names(run.exe, run.argv)
        # Each engine asks for the key it was started with (API_KEY); the proxy must send it.
        stubs[profile.id] = stack.enter_context(StubEngine(profile.id, names, key=ENGINE_KEY))
    for ident, stub in stubs.items():
        _move_port(root, ident, stub.port)
    return stubs


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Estate]:
    if proxy_binary() is None:
        pytest.skip("the LiteLLM proxy is not installed (pip install -e '.[dev]' brings it)")
    work = tmp_path_factory.mktemp("gateway")
    root = work / "root"
    shutil.copytree(REPO / "registry", root / "registry")
    with ExitStack() as stack:
        stubs = _start_stubs(root, stack)
        out = work / "out"
        run = invoke_in(root, "gateway", ESTATE, "--engine-host", "127.0.0.1", "-o", str(out))
        assert run.code == 0, run.text
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        log = work / "proxy.log"
        started = time.monotonic()
        proc = start_proxy(out / "config.yaml", port, work, engine_key=ENGINE_KEY)
        try:
            wait_proxy(proc, url, log)
            startup = time.monotonic() - started
            yield Estate(url, stubs, _expected_routes(root, stubs), log, startup)
        finally:
            proc.kill()  # nothing of the proxy is kept: no graceful shutdown to wait for
            proc.wait(timeout=15)


def _call(url: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{url}{path}", data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


@pytest.mark.litellm
def test_the_tests_run_the_release_the_image_pins() -> None:
    if proxy_binary() is None:
        pytest.skip("the LiteLLM proxy is not installed (pip install -e '.[dev]' brings it)")
    assert LITELLM_IMAGE.tag is not None
    assert LITELLM_IMAGE.tag.removeprefix("v").split("-")[0] == metadata.version("litellm")


@pytest.mark.litellm
def test_every_route_reaches_the_engine_that_serves_its_name(estate: Estate) -> None:
    status, models = _call(estate.url, "/v1/models")
    assert status == 200, models
    assert sorted(m["id"] for m in models["data"]) == sorted(estate.expected)
    # Every engine kind of the estate, and an alias that is not an engine name.
    assert {"qwen38-27b-dual-max", "gemma-31b-dual", "deckard40b-dual-mtp"} == set(estate.stubs)
    assert estate.expected["gemma-4-31b-autoround"] == Expected("gemma-31b-dual", "gemma-4-31b")
    for name, where in sorted(estate.expected.items()):
        before = {ident: len(stub.asked_for()) for ident, stub in estate.stubs.items()}
        body = {"model": name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
        status, answer = _call(estate.url, "/v1/chat/completions", body)
        assert status == 200, f"{name}: {answer}\n{tail(estate.log)}"
        assert (
            answer["choices"][0]["message"]["content"] == f"{where.profile} answered {where.served}"
        )
        for ident, stub in estate.stubs.items():
            new = stub.asked_for()[before[ident] :]
            assert new == ([where.served] if ident == where.profile else []), (name, ident, new)
