"""`check` warns while servers listen on every interface without a required API key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.base import build_base
from tests.support.cli import invoke_in

SETTINGS = "# yaml-language-server: $schema=../schema/settings.schema.json\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The base registry with its profiles published on every interface."""
    built = build_base(tmp_path / "root")
    base = built / "registry" / "profiles" / "tiny-chat.yaml"
    base.write_text(base.read_text().replace("bind_host: 127.0.0.1", "bind_host: 0.0.0.0"))
    return built


def open_port(root: Path) -> list[dict[str, object]]:
    run = invoke_in(root, "check", "--format", "json")
    return [f for f in json.loads(run.out) if f["rule"] == "open-port"]


def test_open_servers_are_named_once_at_the_settings_file(root: Path) -> None:
    (found,) = open_port(root)
    assert (found["severity"], found["file"], found["line"]) == (
        "warning",
        "registry/settings.yaml",
        None,
    )
    assert found["message"] == (
        "2 profile(s) publish their port on every interface and serve anyone who reaches it "
        "unless API_KEY is set: tiny-chat, tiny-chat-long"
    )


def test_requiring_a_key_registry_wide_or_binding_locally_clears_it(root: Path) -> None:
    profile = root / "registry" / "profiles" / "tiny-chat-long.yaml"
    profile.write_text(profile.read_text() + "bind_host: 127.0.0.1\n")
    (found,) = open_port(root)
    assert str(found["message"]).endswith("unless API_KEY is set: tiny-chat")
    (root / "registry" / "settings.yaml").write_text(SETTINGS + "serving: {api_key: required}\n")
    assert open_port(root) == []


def test_an_explicit_optional_policy_is_where_the_warning_points(root: Path) -> None:
    (root / "registry" / "settings.yaml").write_text(SETTINGS + "serving:\n  api_key: optional\n")
    (found,) = open_port(root)
    assert (found["file"], found["line"]) == ("registry/settings.yaml", 3)
