"""One deadline per network operation, against a host that accepts and never answers."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.base import build_base
from tests.support.blackhole import Blackhole
from tests.support.cli import invoke_in
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

PATCH = "registry/patches/tiny-fix.yaml"
FILES = {"one.patch": b"one\n", "two.sh": b"echo two\n"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("deadline") / "root")


@pytest.fixture
def hole() -> Iterator[Blackhole]:
    with Blackhole() as server:
        yield server


@pytest.fixture
def remote(base: Path, tmp_path: Path, hole: Blackhole, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The base whose patch lives on the blackholed host (two files, none cached)."""
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "cache"))
    for name in ("PROFILEGEN_OFFLINE", "HF_HUB_OFFLINE", "PROFILEGEN_NETWORK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "root"
    shutil.copytree(base, root)
    files = "\n".join(
        f"    - {{path: {name}, size: {len(data)}, sha256: {hashlib.sha256(data).hexdigest()}}}"
        for name, data in FILES.items()
    )
    text = (root / PATCH).read_text()
    head, _, tail = text.partition("  kind: vendored\n")
    tail = tail.split("steps:", 1)[1]
    (root / PATCH).write_text(
        f"{head}  kind: remote\n  base_url: https://127.0.0.1:{hole.port}/p/\n  files:\n{files}\n"
        f"steps:{tail}".replace("file: fix.patch", "file: one.patch")
    )
    shutil.rmtree(root / "registry" / "patches" / "files")
    return root


def test_a_blackholed_patch_host_fails_the_bundle_with_exit_2_and_writes_nothing(
    remote: Path, tmp_path: Path, hole: Blackhole
) -> None:
    out = tmp_path / "bundle"
    run = invoke_in(remote, "render", "tiny-chat", "-o", str(out), "--timeout", "1")
    assert run.code == 2, run.text
    # Both files were asked for at once: one at a time, the first would have used it all up.
    assert hole.accepted == 2
    assert "2 patch file(s) are not available" in run.err
    assert "tiny-fix/one.patch" in run.err and "tiny-fix/two.sh" in run.err
    assert "1 s deadline" in run.err
    assert not out.exists()


def test_the_deadline_comes_from_the_environment(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROFILEGEN_NETWORK_TIMEOUT", "0.2")
    run = invoke_in(remote, "render", "tiny-chat", "-o", str(tmp_path / "b"))
    assert run.code == 2, run.text
    assert "0.2 s deadline" in run.err


@pytest.mark.parametrize("value", ["soon", "0", "-1"])
def test_a_bad_deadline_is_a_usage_error(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PROFILEGEN_NETWORK_TIMEOUT", value)
    run = invoke_in(remote, "render", "tiny-chat", "-o", str(tmp_path / "b"))
    assert run.code == 2, run.text
    assert "PROFILEGEN_NETWORK_TIMEOUT must be" in run.err


def test_a_blackholed_hub_fails_fetch_with_exit_2(
    base: Path, hole: Blackhole, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{hole.port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    models = tmp_path / "models"
    run = invoke_in(base, "fetch", "tiny-chat", "--model-dir", str(models), "--timeout", "0.3")
    assert run.code == 2, run.text
    assert "tiny-7b/bf16" in run.err
    assert not models.exists()
