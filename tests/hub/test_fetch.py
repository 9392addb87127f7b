"""`profilegen fetch` end to end against the fake Hub: layout, resumption, integrity, offline."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from profilegen.hub.fetched import FETCHED_NAME
from profilegen.hub.verify import RECORD_NAME
from profilegen.lockfile.lock import LOCK_NAME
from tests.support.cli import Invoke
from tests.support.fakehub import FakeHub, FakeRepo

pytestmark = pytest.mark.usefixtures("isolated_hub_env")

SEED = "qwen38-27b-dual-dflash15-fast"
WEIGHTS_REPO = "born2bewild/Qwen3.8-27B-W4A16-AutoRound-fast"
DRAFTER_REPO = "syvai/Qwen3.8-27B-DFlash2-W4A16"
WEIGHTS_DIR = "qwen3.8-27b-autoround-fast"
DRAFTER_DIR = "qwen3.8-27b-dflash2-w4a16"
LOCK_KEYS = {WEIGHTS_REPO: "qwen3.8-27b/autoround-fast", DRAFTER_REPO: "syvai-qwen38-dflash2"}


def add_seed_repos(hub: FakeHub) -> list[FakeRepo]:
    """Tiny stand-ins for the seed profile's two repos, under their real names."""
    weights = hub.add_repo(
        WEIGHTS_REPO,
        {
            "config.json": b'{"architectures": ["Qwen3_5ForConditionalGeneration"]}',
            "model-00001-of-00002.safetensors": bytes(range(256)) * 16,
            "model-00002-of-00002.safetensors": b"\x01\x02" * 1500,
            "tokenizer.json": b'{"tokens": []}',
        },
        lfs={"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"},
    )
    drafter = hub.add_repo(
        DRAFTER_REPO,
        {"config.json": b'{"architectures": ["DFlash2"]}', "model.safetensors": b"\x07" * 2048},
        lfs={"model.safetensors"},
    )
    return [weights, drafter]


def lock_repos(root: Path, repos: list[FakeRepo]) -> None:
    """What `profilegen lock` would record for the fake repos (resolved, with sha256)."""
    path = root / LOCK_NAME
    lock = json.loads(path.read_text())
    for repo in repos:
        files = repo.commits[repo.head]
        entry = lock["artifacts"][LOCK_KEYS[repo.repo_id]]
        entry.update(
            resolved=True,
            commit=repo.head,
            files=[
                {"path": p, "size": f.size, "sha256": f.sha256 if f.lfs else None}
                for p, f in sorted(files.items())
            ],
            total_size=sum(f.size for f in files.values()),
        )
    path.write_text(json.dumps(lock, indent=2) + "\n")


def landed(model_dir: Path) -> list[str]:
    return sorted(
        p.relative_to(model_dir).as_posix()
        for p in model_dir.rglob("*")
        if p.is_file()
        and ".cache" not in p.relative_to(model_dir).parts
        and p.name not in (RECORD_NAME, FETCHED_NAME)
    )


@pytest.fixture
def locked(hub: FakeHub, repo: Path) -> list[FakeRepo]:
    repos = add_seed_repos(hub)
    lock_repos(repo, repos)
    return repos


def test_fetch_places_exactly_the_profiles_files_where_the_compose_mounts_them(
    hub: FakeHub, locked: list[FakeRepo], repo: Path, invoke: Invoke, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    run = invoke("fetch", SEED, "--model-dir", str(models))
    assert run.code == 0, run.text
    assert landed(models) == [
        f"{WEIGHTS_DIR}/config.json",
        f"{WEIGHTS_DIR}/model-00001-of-00002.safetensors",
        f"{WEIGHTS_DIR}/model-00002-of-00002.safetensors",
        f"{WEIGHTS_DIR}/tokenizer.json",
        f"{DRAFTER_DIR}/config.json",
        f"{DRAFTER_DIR}/model.safetensors",
    ]
    weights, drafter = locked
    assert (models / DRAFTER_DIR / "model.safetensors").read_bytes() == b"\x07" * 2048
    # Every download is pinned to the locked commit.
    gets = hub.requests("resolve_get")
    assert len(gets) == 6
    assert all(weights.head in r.path or drafter.head in r.path for r in gets)
    # The entrypoint reads <model_mount>/<local_dir>: the folders fetch filled.
    compose = (repo / "compose" / SEED / "entrypoint.sh").read_text()
    assert f"/{WEIGHTS_DIR}" in compose and f"/{DRAFTER_DIR}" in compose
    assert "verified by sha256" in run.out

    hub.clear_log()
    again = invoke("fetch", SEED, "--model-dir", str(models), "--format", "json")
    assert again.code == 0, again.text
    assert hub.count("resolve_get") == 0
    objects = json.loads(again.out)
    assert [o["downloaded"] for o in objects] == [[], []]
    assert [o["verified"] for o in objects] == ["sha256", "sha256"]


def test_a_corrupted_file_is_named_and_fails(
    hub: FakeHub,
    locked: list[FakeRepo],
    invoke: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    models = tmp_path / "models"
    assert invoke("fetch", SEED, "--model-dir", str(models)).code == 0
    shard = models / WEIGHTS_DIR / "model-00001-of-00002.safetensors"
    stat = shard.stat()
    # Bit rot: same size, same timestamps, so the download cache still trusts the file.
    data = bytearray(shard.read_bytes())
    data[100] ^= 0xFF
    shard.write_bytes(bytes(data))
    os.utime(shard, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    run = invoke("fetch", SEED, "--model-dir", str(models))
    assert run.code == 1
    assert str(shard) in run.err and "sha256" in run.err and LOCK_NAME in run.err

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # verify-only finds it too
    offline = invoke("fetch", SEED, "--model-dir", str(models))
    assert offline.code == 1
    assert str(shard) in offline.err


def test_offline_verifies_present_files_and_names_missing_ones(
    hub: FakeHub,
    locked: list[FakeRepo],
    invoke: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    models = tmp_path / "models"
    assert invoke("fetch", SEED, "--model-dir", str(models)).code == 0
    hub.clear_log()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ok = invoke("fetch", SEED, "--model-dir", str(models))
    assert ok.code == 0, ok.text
    assert hub.count() == 0

    missing = models / DRAFTER_DIR / "config.json"
    missing.unlink()
    run = invoke("fetch", SEED, "--model-dir", str(models))
    assert run.code == 1
    assert f"{missing}: missing" in run.err
    assert "HF_HUB_OFFLINE" in run.err
    assert hub.count() == 0


def test_dry_run_json_of_the_seed_profile_offline(
    repo: Path, invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shipped lock: nothing resolved yet, so the plan comes from the registry alone.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models = tmp_path / "models"
    run = invoke("fetch", SEED, "--model-dir", str(models), "--dry-run", "--format", "json")
    assert run.code == 0, run.text
    plan = json.loads(run.out)
    assert [(o["role"], o["repo"], o["target"]) for o in plan] == [
        ("weights", WEIGHTS_REPO, str(models / WEIGHTS_DIR)),
        ("drafter", DRAFTER_REPO, str(models / DRAFTER_DIR)),
    ]
    assert all({"repo", "revision", "files", "target"} <= set(o) for o in plan)
    assert not models.exists()


def test_dry_run_lists_files_sizes_and_what_would_download_without_the_network(
    hub: FakeHub, locked: list[FakeRepo], invoke: Invoke, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    run = invoke("fetch", SEED, "--model-dir", str(models), "--dry-run")
    assert run.code == 0, run.text
    assert f"{WEIGHTS_REPO} @ {locked[0].head} -> {models / WEIGHTS_DIR}" in run.out
    assert "model-00001-of-00002.safetensors  4.1 kB  download" in run.out
    assert hub.count() == 0  # the plan is the lock's
    assert not models.exists()

    assert invoke("fetch", SEED, "--model-dir", str(models)).code == 0
    (models / WEIGHTS_DIR / "tokenizer.json").unlink()
    hub.clear_log()
    plan = json.loads(
        invoke("fetch", SEED, "--model-dir", str(models), "--dry-run", "--format", "json").out
    )
    todo = {o["repo"]: [f["path"] for f in o["files"] if f["download"]] for o in plan}
    assert todo == {WEIGHTS_REPO: ["tokenizer.json"], DRAFTER_REPO: []}
    assert hub.count() == 0


def test_dry_run_with_an_unresolved_lock_says_what_only_the_hub_knows(
    hub: FakeHub, invoke: Invoke, tmp_path: Path
) -> None:
    run = invoke("fetch", SEED, "--model-dir", str(tmp_path / "m"), "--dry-run")
    assert run.code == 0, run.text
    assert hub.count() == 0
    assert "file list unknown without the Hub" in run.out


def test_dry_run_offline_uses_the_lock(
    locked: list[FakeRepo], invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = invoke("fetch", SEED, "--model-dir", str(tmp_path / "m"), "--dry-run", "--format", "json")
    weights = json.loads(run.out)[0]
    assert weights["source"] == "lock" and weights["revision"] == locked[0].head
    assert [f["path"] for f in weights["files"]][0] == "config.json"
    assert all(f["size"] and f["download"] for f in weights["files"])


def test_the_hub_serving_other_bytes_than_locked_is_an_error(
    hub: FakeHub, locked: list[FakeRepo], repo: Path, invoke: Invoke, tmp_path: Path
) -> None:
    lock = json.loads((repo / LOCK_NAME).read_text())
    entry = lock["artifacts"]["syvai-qwen38-dflash2"]
    entry["files"][1]["sha256"] = hashlib.sha256(b"something else").hexdigest()
    (repo / LOCK_NAME).write_text(json.dumps(lock))
    run = invoke("fetch", SEED, "--model-dir", str(tmp_path / "m"))
    assert run.code == 1
    assert "model.safetensors" in run.err and "differs from" in run.err


def test_unlocked_artifacts_still_fetch_with_a_warning(
    hub: FakeHub, invoke: Invoke, tmp_path: Path
) -> None:
    add_seed_repos(hub)  # the shipped lock has no sha256 for them
    models = tmp_path / "models"
    run = invoke("fetch", SEED, "--model-dir", str(models), "--format", "json")
    assert run.code == 0, run.text
    assert "not verified against the lock" in run.err
    assert len(landed(models)) == 6
    # Held to what the Hub says instead: sizes for plain git files, sha256 for LFS ones.
    assert [o["verified"] for o in json.loads(run.out)] == ["the Hub's sizes", "the Hub's sizes"]


def test_unchanged_files_are_not_hashed_again(
    hub: FakeHub,
    locked: list[FakeRepo],
    invoke: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    models = tmp_path / "models"
    assert invoke("fetch", SEED, "--model-dir", str(models)).code == 0
    record_path = models / RECORD_NAME
    record = json.loads(record_path.read_text())
    shard = f"{DRAFTER_DIR}/model.safetensors"
    assert record["files"][shard]["sha256"] == hashlib.sha256(b"\x07" * 2048).hexdigest()
    assert record["files"][shard]["size"] == 2048

    # Make the record lie about an unchanged file: only a check that trusts it sees the lie.
    record["files"][shard]["sha256"] = "0" * 64
    record_path.write_text(json.dumps(record))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    trusted = invoke("fetch", SEED, "--model-dir", str(models))
    assert trusted.code == 1
    assert f"{models / shard}: sha256 0000000000000000… does not match" in trusted.err

    # Any change to the file (here only its timestamps) and it is hashed again.
    os.utime(models / shard)
    assert invoke("fetch", SEED, "--model-dir", str(models)).code == 0


def test_offline_a_5_byte_file_for_a_14_gb_gguf_fails_on_its_declared_size(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shipped lock records declared facts only: no sha256, but a declared size.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models = tmp_path / "models"
    gguf = models / "qwen3.8-27b-gguf" / "unsloth-iq4xs" / "Qwen3.8-27B-UD-IQ4_XS.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF\0")
    run = invoke("fetch", "qwen38-27b-single-iq4xs", "--model-dir", str(models))
    assert run.code == 1, run.text
    assert (
        f"{gguf}: 5 bytes, but qwen3.8-27b/gguf-iq4xs declares 14.3 GB (±5%); "
        f"{LOCK_NAME} has no sha256 for it, run `profilegen lock` online"
    ) in run.err
