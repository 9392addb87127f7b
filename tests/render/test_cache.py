"""Remote patch files: the content-addressed cache, `cache add`, and the offline error."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from profilegen.cli import cli

SEED = "qwen38-27b-dual-dflash15-fast"
UVA = "registry/patches/vllm-wsl-uva.yaml"
UVA_SHA = "00dff5a40a8b4dd6e57fd7dccc55aafddd9fab90cd036356088f412fefc84e3e"
INSTALLER = b"#!/bin/bash\necho 'uva fallback'\n"


def invoke(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROFILEGEN_OFFLINE", "1")
    return tmp_path


def test_offline_bundle_names_missing_files_and_writes_nothing(env: Path, repo: Path) -> None:
    root = repo
    out = env / "bundle"
    code, _, err = invoke(root, "render", SEED, "-o", str(out))
    assert code == 1
    assert "11 patch file(s) are not available" in err
    assert "vllm-dflash15/spec-decode-attn.patch" in err
    assert "profilegen cache add" in err
    assert "https://raw.githubusercontent.com/noonghunna/club-3090/" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_cache_add_accepts_only_pinned_files(env: Path, repo: Path) -> None:
    root = repo
    stranger = env / "stranger.sh"
    stranger.write_bytes(b"echo not pinned\n")
    code, _, err = invoke(root, "cache", "add", str(stranger))
    assert code == 1
    assert "is not pinned by any patch" in err
    assert not (env / "cache" / "blobs").exists()


def pin_installer(root: Path) -> None:
    """Re-pin vllm-wsl-uva to a file this test can produce (the real one is upstream)."""
    path = root / UVA
    text = path.read_text()
    text = text.replace(UVA_SHA, hashlib.sha256(INSTALLER).hexdigest())
    text = text.replace("size: 1908", f"size: {len(INSTALLER)}")
    path.write_text(text)


def test_cached_files_fill_an_offline_bundle(env: Path, repo: Path) -> None:
    root = repo
    pin_installer(root)
    downloaded = env / "install.sh"
    downloaded.write_bytes(INSTALLER)
    code, out, err = invoke(root, "cache", "add", str(downloaded))
    assert code == 0, err
    assert out == f"cached {downloaded} as vllm-wsl-uva/install.sh\n"
    digest = hashlib.sha256(INSTALLER).hexdigest()
    code, out, err = invoke(root, "cache", "add", str(downloaded), "--format", "json")
    assert code == 0, err
    assert json.loads(out) == [
        {"path": str(downloaded), "sha256": digest, "patch_files": ["vllm-wsl-uva/install.sh"]}
    ]
    assert (env / "cache" / "blobs" / "sha256" / digest).read_bytes() == INSTALLER
    # The seed still needs the other patches; a profile using only cached files renders.
    code, _, err = invoke(root, "render", SEED, "-o", str(env / "seed"))
    assert code == 1
    assert "vllm-wsl-uva/install.sh" not in err
    assert "10 patch file(s) are not available" in err


def test_corrupted_cache_entry_is_not_used(env: Path, repo: Path) -> None:
    root = repo
    pin_installer(root)
    digest = hashlib.sha256(INSTALLER).hexdigest()
    blob = env / "cache" / "blobs" / "sha256" / digest
    blob.parent.mkdir(parents=True)
    blob.write_bytes(INSTALLER + b"tampered")
    code, _, err = invoke(root, "render", SEED, "-o", str(env / "seed"))
    assert code == 1
    assert "vllm-wsl-uva/install.sh" in err


def test_offline_bundle_from_the_cache(env: Path, repo: Path) -> None:
    root = repo
    pin_installer(root)
    (root / "registry/profiles/qwen38-27b-dual-uva-only.yaml").write_text(
        "# yaml-language-server: $schema=../../schema/profile.schema.json\n"
        "id: qwen38-27b-dual-uva-only\n"
        f"extends: {SEED}\n"
        "title: the seed with only the WSL2 UVA patch\n"
        "port: 8198\n"
        "patches: [vllm-wsl-uva]\n"
        # Without the seed's grouping patch vLLM pads the pool less tightly: a shorter
        # context keeps the profile one fit says boots.
        "envelope:\n  max_model_len: 163840\n"
    )
    downloaded = env / "install.sh"
    downloaded.write_bytes(INSTALLER)
    assert invoke(root, "cache", "add", str(downloaded))[0] == 0
    out = env / "bundle"
    code, _, err = invoke(root, "render", "qwen38-27b-dual-uva-only", "-o", str(out))
    assert code == 0, err
    assert (out / "patches" / "vllm-wsl-uva" / "install.sh").read_bytes() == INSTALLER
    assert {p.name for p in out.iterdir()} == {
        "compose.yaml",
        "entrypoint.sh",
        "helpers.sh",
        "patches.manifest.json",
        ".env.example",
        "patches",
    }
