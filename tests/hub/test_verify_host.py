"""`verify` says what it proved (hash-verified, size-only, missing), `--strict` fails on less
than hashes, and `--host` checks the host: GPUs, container toolkit, free memory, mounted paths."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.support.cli import Invoke

PROFILE = "qwen38-27b-dual-fast"  # its lock entry is declared facts only, as shipped
WEIGHTS = "qwen3.8-27b-autoround-int4"
DECLARED = 18.23 * 2**30  # what the model declares for the artifact


@pytest.fixture
def models(tmp_path: Path) -> Path:
    """A folder with a file of exactly the declared size (all zeros): not the weights."""
    folder = tmp_path / "models"
    (folder / WEIGHTS).mkdir(parents=True)
    with (folder / WEIGHTS / "model.safetensors").open("wb") as handle:
        handle.truncate(round(DECLARED))
    return folder


def test_a_folder_checked_by_size_only_says_so_and_fails_strict(
    models: Path, invoke: Invoke
) -> None:
    run = invoke("verify", PROFILE, "--model-dir", str(models))
    assert run.code == 0, run.text
    assert run.out.splitlines()[0].endswith(": size-only")
    assert run.out.splitlines()[-1].startswith(
        f"{PROFILE}: every file is in place; 1 size-only: 1 artifact(s) checked by size only, "
        "as profilegen.lock.json has no sha256 for them (`profilegen lock` online pins them); "
        "--strict fails on this ("
    )
    assert "hash-verified" not in run.out
    strict = invoke("verify", PROFILE, "--model-dir", str(models), "--strict", "--format", "json")
    assert strict.code == 1
    data = json.loads(strict.out)
    assert (data["ok"], data["proved"]["size-only"], data["artifacts"][0]["proof"]) == (
        False,
        1,
        "size-only",
    )


def _tool(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def host_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with only the shell's tools: no nvidia-smi, docker or toolkit unless a test adds
    them (the host's own are out of reach)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("sh", "cat"):
        (folder / tool).symlink_to(f"/bin/{tool}")
    monkeypatch.setenv("PATH", str(folder))
    return folder


def test_a_bare_host_is_told_what_it_lacks(models: Path, invoke: Invoke, host_bin: Path) -> None:
    run = invoke("verify", PROFILE, "--model-dir", str(models), "--host")
    assert run.code == 1
    host = [line for line in run.out.splitlines() if line.startswith("host")]
    assert host[0] == (
        "host gpus: PROBLEM: no GPU found: nvidia-ml-py is not installed (pip install "
        "'profilegen[nvml]'); nvidia-smi is not on PATH"
    )
    assert host[1].startswith("host toolkit: PROBLEM: no NVIDIA container toolkit (none of ")
    assert host[-1] == "host: 2 problem(s) to fix before `docker compose up`"


def test_a_ready_host_passes_and_a_missing_mounted_path_is_named(
    models: Path, invoke: Invoke, host_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two 24 GiB cards, 23.5 GiB free each, as nvidia-smi prints them; the toolkit's CLI.
    row = "NVIDIA GeForce RTX 3090, 24576, 24064, 550.54.14, 350.00, 4, 16"
    _tool(host_bin, "nvidia-smi", f"echo '{row}'\necho '{row}'\n")
    _tool(host_bin, "nvidia-ctk", "exit 0\n")
    run = invoke("verify", PROFILE, "--model-dir", str(models), "--host")
    assert run.code == 0, run.text
    host = [line for line in run.out.splitlines() if line.startswith("host")]
    assert host[0] == (
        "host gpus: ok: 2x NVIDIA GeForce RTX 3090, driver 550.54.14 (nvidia-smi); "
        "the profile's rig is 2x NVIDIA GeForce RTX 3090"
    )
    assert (
        host[1]
        == f"host toolkit: ok: NVIDIA container toolkit: nvidia-ctk at {host_bin}/nvidia-ctk"
    )
    assert host[2].startswith("host vram: ok: GPU 0: 23.5 GiB free, fit predicts ")
    assert f"host mount: ok: {models} (MODEL_DIR) -> /root/.cache/huggingface: present" in host
    assert host[-1] == "host: ready for `docker compose up`"

    # A profile whose patches compile at boot mounts the host's ninja and CUDA headers.
    monkeypatch.setenv("NINJA_BIN", str(host_bin / "no-ninja-here"))
    seed = invoke("verify", "qwen38-27b-dual-dflash15-fast", "--model-dir", str(models), "--host")
    assert seed.code == 1
    assert (
        f"host mount: PROBLEM: {host_bin}/no-ninja-here -> /usr/local/bin/ninja: missing: Compose "
        "would mount an empty folder in its place; install it, or point the variable that names "
        "it at it (see .env.example)"
    ) in seed.out
