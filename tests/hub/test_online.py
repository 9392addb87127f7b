"""`check --online` and `lock` against a fake Hub reached through HF_ENDPOINT."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from profilegen.cli import cli
from profilegen.lockfile.artifacts import artifact_uses
from profilegen.registry import open_registry
from tests.support.fakehub import FakeFile, FakeHub


@pytest.fixture()
def scratch(repo: Path) -> Path:
    return repo


def populate(hub: FakeHub, root: Path) -> None:
    """One fake repo per artifact repo, claiming the declared sizes (no real bytes)."""
    by_repo: dict[str, dict[str, FakeFile]] = {}
    pinned: dict[str, str] = {}
    for use in artifact_uses(open_registry(root)):
        a = use.artifact
        files = by_repo.setdefault(a.repo, {"config.json": FakeFile(b"{}")})
        names = a.files or ["model.safetensors"]
        declared = a.size.bytes if a.size is not None else 10**9  # unknown: the Hub says
        share = declared - (2 if not a.files else 0)
        for name in names:
            files[name] = FakeFile(name.encode(), lfs=True, reported_size=share // len(names))
        if a.pinned:
            pinned[a.repo] = a.revision or ""
    for repo_id, files in by_repo.items():
        repo = hub.add_repo(repo_id, files)
        if repo_id in pinned:
            repo.commits[pinned[repo_id]] = repo.commits[repo.head]


@pytest.fixture()
def hub(scratch: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    with FakeHub() as fake:
        populate(fake, scratch)
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("PROFILEGEN_HUB_TIMEOUT", "2")
        monkeypatch.setenv("PROFILEGEN_HUB_RETRIES", "3")
        yield fake


def run(root: Path, *args: str) -> tuple[int, list[dict[str, object]], str]:
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    findings = []
    if "--format" in args and result.stdout.strip():
        findings = json.loads(result.stdout)
    return result.exit_code, findings, result.stderr


def errors(findings: list[dict[str, object]]) -> list[dict[str, object]]:
    return [f for f in findings if f["severity"] == "error"]


def test_clean_registry_passes_online_and_locks(hub: FakeHub, scratch: Path) -> None:
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 0, findings
    assert not errors(findings)
    # Unpinned revisions are flagged, never fatal.
    assert any(f["rule"] == "hub-revision-unpinned" for f in findings)
    code, _, err = run(scratch, "lock")
    assert code == 0, err
    lock = json.loads((scratch / "profilegen.lock.json").read_text())
    entry = lock["artifacts"]["qwen3.8-27b/fp8"]
    assert entry["resolved"] is True
    assert entry["commit"] == "017b9c7af6b5689d5dd426a76e0bc077eb5ca20a"
    gguf = lock["artifacts"]["qwen3.8-27b/gguf-iq4xs"]
    assert [f["path"] for f in gguf["files"]] == ["Qwen3.8-27B-UD-IQ4_XS.gguf"]
    assert len(gguf["files"][0]["sha256"]) == 64
    # After locking, the offline check has nothing left to warn about for artifacts.
    code, findings, _ = run(scratch, "check", "--format", "json")
    assert code == 0
    assert not [f for f in findings if f["rule"] == "lock"]
    # Offline, no request leaves the process.
    before = hub.count()
    run(scratch, "check", "--format", "json")
    assert hub.count() == before


def finding_for(findings: list[dict[str, object]], rule: str) -> dict[str, object]:
    hits = [f for f in findings if f["rule"] == rule]
    assert hits, findings
    return hits[0]


def test_unknown_repo_names_the_artifact(hub: FakeHub, scratch: Path) -> None:
    del hub.repos["syvai/Qwen3.8-27B-DFlash2-W4A16"]
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 1
    hit = finding_for(findings, "hub-repo-not-found")
    assert hit["file"] == "registry/drafters/syvai-qwen38-dflash2.yaml"
    assert "syvai-qwen38-dflash2" in str(hit["message"])


def test_missing_revision(hub: FakeHub, scratch: Path) -> None:
    repo = hub.repos["Qwen/Qwen3.8-27B-FP8"]
    del repo.commits["017b9c7af6b5689d5dd426a76e0bc077eb5ca20a"]
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 1
    hit = finding_for(findings, "hub-revision-not-found")
    assert hit["file"] == "registry/models/qwen3.8-27b.yaml"
    assert "qwen3.8-27b/fp8" in str(hit["message"])


def test_missing_file_and_size_drift(hub: FakeHub, scratch: Path) -> None:
    repo = hub.repos["unsloth/Qwen3.8-27B-GGUF"]
    files = dict(repo.commits[repo.head])
    del files["mmproj-F16.gguf"]
    big = files["Qwen3.8-27B-UD-Q8_K_XL.gguf"]
    files["Qwen3.8-27B-UD-Q8_K_XL.gguf"] = FakeFile(big.content, lfs=True, reported_size=40 * 10**9)
    repo.commit(files)
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 1
    assert "qwen3.8-27b/mmproj-f16" in str(finding_for(findings, "hub-file-missing")["message"])
    drift = finding_for(findings, "hub-size-drift")
    assert "qwen3.8-27b/gguf-q8kxl" in str(drift["message"])
    assert drift["severity"] == "error"


def test_size_drift_alone_fails(hub: FakeHub, scratch: Path) -> None:
    repo = hub.repos["syvai/Qwen3.8-27B-DFlash2-W4A16"]
    files = dict(repo.commits[repo.head])
    files["model.safetensors"] = FakeFile(b"x", lfs=True, reported_size=3 * 10**9)
    repo.commit(files)
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 1
    drift = finding_for(findings, "hub-size-drift")
    assert drift["file"] == "registry/drafters/syvai-qwen38-dflash2.yaml"
    assert "syvai-qwen38-dflash2" in str(drift["message"])


def test_gated_repo_needs_a_token(
    hub: FakeHub, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = hub.repos["born2bewild/Qwen3.8-27B-W4A16-AutoRound-fast"]
    repo.gated = "manual"
    repo.tokens = frozenset({"hf_ci_token"})
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 1
    assert "qwen3.8-27b/autoround-fast" in str(
        finding_for(findings, "hub-gated-no-access")["message"]
    )
    monkeypatch.setenv("HF_TOKEN", "hf_ci_token")
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 0, errors(findings)


def test_rate_limit_then_ok_passes(hub: FakeHub, scratch: Path) -> None:
    hub.fail("model_info", [429, 503], retry_after=0, repo="Qwen/Qwen3.8-27B-FP8")
    code, findings, _ = run(scratch, "check", "--online", "--format", "json")
    assert code == 0, errors(findings)
    assert hub.count("model_info", repo="Qwen/Qwen3.8-27B-FP8") == 3


def test_stalled_hub_is_unreachable_within_the_deadline(hub: FakeHub, scratch: Path) -> None:
    # How fast is measured in bench/bench_deadline.py; here: what it says, and exit 2.
    hub.stall("model_info")
    code, findings, err = run(scratch, "check", "--online", "--format", "json", "--timeout", "0.5")
    assert code == 2, err
    assert findings == []
    count = len(artifact_uses(open_registry(scratch)))
    assert f"error: the Hub could not be reached for {count} of {count} artifacts" in err
    assert "within the 0.5 s deadline" in err or "ReadTimeout" in err


def test_lock_against_a_stalled_hub_writes_nothing(hub: FakeHub, scratch: Path) -> None:
    before = (scratch / "profilegen.lock.json").read_bytes()
    hub.stall("model_info")
    code, _, err = run(scratch, "lock", "--timeout", "0.5")
    assert code == 2, err
    assert (scratch / "profilegen.lock.json").read_bytes() == before


def test_offline_mode_refuses_online_check(scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, err = run(scratch, "check", "--online")
    assert code == 2
    assert "HF_HUB_OFFLINE" in err
    assert "Traceback" not in err


def test_lock_offline_keeps_declared_facts(scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, _ = run(scratch, "lock", "--offline")
    assert code == 0
    lock = json.loads((scratch / "profilegen.lock.json").read_text())
    assert lock["patches"]["vllm-dflash15/spec-decode-attn.patch"]["sha256"] == (
        "43651ee99a4c749cd3e07a52834374cadee0a9f2612b644f74c1324774f16b5b"
    )
    assert lock["artifacts"]["qwen3.8-27b/autoround-fast"]["resolved"] is False
