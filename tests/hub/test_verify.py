"""`profilegen verify`: the rig's model files against the lock, offline, hashed once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profilegen.hub.preflight import promised_shards
from profilegen.lockfile.lock import LOCK_NAME
from tests.hub import test_fetch as fetch_tests
from tests.support.cli import Invoke
from tests.support.fakehub import FakeHub, FakeRepo

SEED, WEIGHTS_DIR, DRAFTER_DIR = fetch_tests.SEED, fetch_tests.WEIGHTS_DIR, fetch_tests.DRAFTER_DIR
SHARD = f"{WEIGHTS_DIR}/model-00001-of-00002.safetensors"
# The fetch suite's locked seed repos, on the fake Hub in an isolated environment.
locked = fetch_tests.locked
pytestmark = pytest.mark.usefixtures("isolated_hub_env")


@pytest.fixture
def models(
    hub: FakeHub,
    locked: list[FakeRepo],
    invoke: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """The seed profile's files fetched into a model folder; then the Hub is forbidden."""
    folder = tmp_path / "models"
    assert invoke("fetch", SEED, "--model-dir", str(folder)).code == 0
    hub.clear_log()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return folder


def test_verify_passes_on_a_fetched_folder_without_reading_it_again(
    hub: FakeHub, models: Path, invoke: Invoke
) -> None:
    run = invoke("verify", SEED, "--model-dir", str(models))
    assert run.code == 0, run.text
    lines = run.out.splitlines()
    assert lines[0].startswith(
        f"weights: born2bewild/Qwen3.8-27B-W4A16-AutoRound-fast -> {models / WEIGHTS_DIR}: 4 files"
    )
    assert f"size and sha256 from {LOCK_NAME}" in lines[0] and lines[0].endswith(": hash-verified")
    assert lines[-1] == (
        f"{SEED}: every file is in place and hash-verified (0 file(s) hashed, the rest known "
        f"from {models / '.profilegen-verified.json'})"
    )
    assert invoke("verify", SEED, "--model-dir", str(models), "--strict").code == 0
    assert hub.log == []  # no request at all


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("delete", ": missing"),
        ("truncate", ": 2,048 bytes, profilegen.lock.json says 4,096"),
        ("corrupt", ": sha256 "),
    ],
)
def test_a_missing_truncated_or_corrupt_shard_is_named(
    models: Path, invoke: Invoke, damage: str, problem: str
) -> None:
    path = models / SHARD
    content = path.read_bytes()
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        path.write_bytes(content[:2048])
    else:
        path.write_bytes(bytes([content[0] ^ 1]) + content[1:])
    run = invoke("verify", SEED, "--model-dir", str(models))
    assert run.code == 1, run.text
    (named,) = [line for line in run.out.splitlines() if line.startswith(f"  {path}")]
    assert named.startswith(f"  {path}{problem}")
    if damage == "corrupt":
        assert named.endswith("…)") and "does not match profilegen.lock.json (" in named
    hashed = 1 if damage == "corrupt" else 0
    proof = "missing" if damage == "delete" else "wrong"
    last = run.out.splitlines()[-1]
    assert last.startswith(
        f"{SEED}: 1 problem(s) with the files in {models} (1 hash-verified, 1 {proof}; "
        f"{hashed} file(s) hashed"
    ), last
    assert f"`profilegen fetch {SEED} --model-dir {models}`" in run.out


def test_verify_json_lists_every_artifact(models: Path, invoke: Invoke) -> None:
    (models / DRAFTER_DIR / "model.safetensors").unlink()
    run = invoke("verify", SEED, "--model-dir", str(models), "--format", "json")
    assert run.code == 1
    data = json.loads(run.out)
    assert data["ok"] is False
    assert [(a["role"], len(a["problems"])) for a in data["artifacts"]] == [
        ("weights", 0),
        ("drafter", 1),
    ]


def test_a_split_gguf_name_promises_its_other_shards() -> None:
    assert promised_shards(("q/M-Q8_0-00001-of-00003.gguf", "q/M-Q8_0-00003-of-00003.gguf")) == [
        "q/M-Q8_0-00002-of-00003.gguf"
    ]
    assert promised_shards(("M-Q4_K_M.gguf",)) == []
