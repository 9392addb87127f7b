"""HF_ENDPOINT's user:password@ never reaches the output: the Hub library's own warnings
while `fetch` retries a broken download name the URL it downloads from, credentials and all
("Error while downloading from http://user:password@host/..."), and are printed with them
hidden; an HF_ENDPOINT the library cannot parse (it does so on import) is a usage error
naming it, never a ValueError out of an import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile import hubs
from tests.support.cli import Invoke, invoke_in
from tests.support.fakehub import FakeHub

BASE = Path(__file__).resolve().parents[1] / "registry" / "base"


def _profilegen(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "profilegen", "--root", str(root), *args],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def test_a_broken_download_is_retried_without_showing_the_endpoint_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    shutil.copytree(BASE, root)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))},
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
        "PROFILEGEN_CACHE": str(tmp_path / "cache"),
    }
    monkeypatch.setenv("PROFILEGEN_CACHE", env["PROFILEGEN_CACHE"])
    for args in (("schema",), ("lock", "--offline")):  # offline: no Hub, in this process
        assert invoke_in(root, *args).code == 0
    with FakeHub() as hub:
        hubs.honest()(hub)
        hub.cut(hubs.WEIGHTS[0], "model.safetensors", after=10, times=100)
        env["HF_ENDPOINT"] = hub.url.replace("http://", "http://bob:hunter2pw@")
        run = _profilegen(root, env, "fetch", "tiny-chat", "--model-dir", str(tmp_path / "m"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Error while downloading from http://***@127.0.0.1:" in run.stderr
    assert "hunter2pw" not in run.stdout + run.stderr


@pytest.mark.parametrize(
    ("endpoint", "shown", "why"),
    [
        ("http://[::1", "http://[::1", "Invalid IPv6 URL"),
        ("http://bob:hunter2pw@127.0.0.1:99999", "http://***@127.0.0.1:99999",
         "Port out of range 0-65535"),
    ],
)  # fmt: skip
def test_an_endpoint_the_hub_library_cannot_read_is_a_usage_error(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, endpoint: str, shown: str, why: str
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    run = invoke("model", "add", "lab/X-7B", "--dry-run")
    assert run.code == 2, run.text
    assert run.err == (
        f"error: HF_ENDPOINT '{shown}' is not a URL ({why}): set it to the Hub's URL, or unset it\n"
    )
