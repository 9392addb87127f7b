"""The API key reaches each engine off its command line, is never shown, and is enforced where
a profile requires it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profilegen.explain.core import Explanation, Scenario, explain
from profilegen.explain.report import as_json, as_text
from profilegen.registry import Registry
from profilegen.render import render_profile
from tests.support.repo import shared_registry

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-do-not-print-7f3a"
VLLM = "qwen38-27b-dual-dflash15-fast"
LLAMA = "deckard40b-dual-mtp"
SGLANG = "qwen36-27b-dual-eagle3"


@pytest.fixture(scope="module")
def registry() -> Registry:
    return shared_registry()


def run(registry: Registry, profile_id: str, **env: str) -> Explanation:
    profile = registry.profiles[profile_id]
    return explain(registry, profile, Scenario(env=tuple(sorted(env.items()))))


def everything_shown(e: Explanation) -> str:
    return as_text(e) + json.dumps(as_json(e))


def test_vllm_reads_the_key_from_its_environment(registry: Registry) -> None:
    e = run(registry, VLLM, API_KEY=KEY)
    assert e.launched
    assert e.env["VLLM_API_KEY"] == KEY
    assert "API_KEY" not in e.env and "API_KEY_FILE" not in e.env
    assert not any(KEY in word for word in e.argv)
    assert "API key: required of every request" in e.said


def test_llama_server_reads_the_key_from_a_private_file(registry: Registry) -> None:
    e = run(registry, LLAMA, API_KEY=KEY)
    assert e.launched
    at = e.argv.index("--api-key-file")
    assert not any(KEY in word for word in e.argv)
    assert e.argv[at + 1] and "LLAMA_API_KEY" not in e.env and "API_KEY" not in e.env


def test_a_key_file_is_read_in_the_container(registry: Registry, tmp_path: Path) -> None:
    # A file the container has (the kernel's name, one line) is read as the key, without the
    # line break that ends it.
    e = run(registry, VLLM, API_KEY_FILE="/proc/sys/kernel/ostype")
    assert e.env["VLLM_API_KEY"] == "Linux"
    # A file of the host is not in the container: explain refuses as the container would.
    secret = tmp_path / "api-key"
    secret.write_text(KEY + "\n")
    host = run(registry, VLLM, API_KEY_FILE=str(secret))
    assert (host.exit_code, host.message) == (
        1,
        f"API_KEY_FILE={secret} is not a readable file",
    )
    assert KEY not in everything_shown(host)


def test_without_a_key_nothing_is_passed(registry: Registry) -> None:
    e = run(registry, VLLM)
    assert e.launched and "VLLM_API_KEY" not in e.env
    assert "--api-key-file" not in run(registry, LLAMA).argv


@pytest.mark.parametrize("profile_id", [VLLM, LLAMA])
def test_reports_never_show_the_key(registry: Registry, profile_id: str) -> None:
    e = run(registry, profile_id, API_KEY=KEY)
    shown = everything_shown(e)
    assert KEY not in shown and "<secret>" in shown


def test_sglang_refuses_a_key_it_could_only_take_on_its_command_line(registry: Registry) -> None:
    e = run(registry, SGLANG, API_KEY=KEY)
    assert not e.launched and e.exit_code == 2
    assert e.message is not None and e.message.startswith(
        "SGLang takes an API key only on its command line"
    )
    assert KEY not in everything_shown(e)
    assert run(registry, SGLANG).launched


def test_a_required_key_refuses_to_boot_without_one(registry: Registry) -> None:
    profile = registry.profiles[VLLM]
    serve = profile.serve.model_copy(update={"api_key": "required"})
    strict = profile.model_copy(update={"serve": serve})
    rendered = render_profile(registry, strict)
    refused = explain(registry, strict, Scenario(), rendered)
    assert (refused.exit_code, refused.message) == (
        2,
        "this profile requires an API key: set API_KEY (or API_KEY_FILE) before starting it; "
        "refusing to boot",
    )
    assert explain(registry, strict, Scenario(env=(("API_KEY", KEY),)), rendered).launched
    env_example = rendered.env_example.decode()
    assert "this profile refuses to boot without one" in env_example
