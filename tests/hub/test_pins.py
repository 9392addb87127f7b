"""`lock` writes a remote patch pin only once the file's bytes match it: a wrong pin stays an
error after `lock --offline`, on a scratch copy of the repository and a patch cache of the
test's own (no network)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from profilegen.check.rules import CheckContext
from profilegen.check.rules.lockfile import lock as lock_rule
from profilegen.registry import open_registry
from tests.hub.test_fetch import (
    DRAFTER_REPO,
    SEED,
    WEIGHTS_DIR,
    WEIGHTS_REPO,
    add_seed_repos,
    lock_repos,
)
from tests.support.blackhole import Blackhole
from tests.support.cli import invoke_in
from tests.support.fakehub import FakeFile, FakeHub
from tests.support.repo import copy_repo

PATCH = "registry/patches/google-canonical-chat-template-vllm-v0271.yaml"
KEY = "google-canonical-chat-template-vllm-v0271/chat_template.jinja"
PINNED = "ae53464bf3be25802b3a5b37def7fd89667067d7577049b3b2d74c4d8de4c6d4"
BODY = b"{{ messages }}\n"
UNPINNED_WORDS = (
    "UNPINNED: revision main is a branch, so fetch downloads whatever it holds that day (pin a "
    "commit as its revision, or run `profilegen lock` online)"
)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the repository, and an empty patch cache (offline)."""
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROFILEGEN_OFFLINE", "1")
    return copy_repo(tmp_path / "repo")


def _repin(repo: Path, sha256: str, size: int = 18683) -> None:
    path = repo / PATCH
    text = path.read_text()
    assert text.count(f"sha256: {PINNED}") == 1 and text.count("size: 18683") == 1
    path.write_text(text.replace(PINNED, sha256).replace("size: 18683", f"size: {size}"))


def _lock_findings(repo: Path) -> list[str]:
    return [f.message for f in lock_rule(CheckContext(open_registry(repo)))]


def test_a_wrong_patch_pin_stays_an_error_after_lock_offline(scratch: Path) -> None:
    wrong = "f" * 64
    _repin(scratch, wrong)
    before = (scratch / "profilegen.lock.json").read_bytes()
    run = invoke_in(scratch, "lock", "--offline")
    assert run.code == 1
    assert run.err.strip().splitlines() == [
        "error: profilegen.lock.json not written: 1 remote patch pin(s) not verified:",
        f"  {KEY} (sha256 ffffffffffff…): not in the cache (offline); profilegen.lock.json pins "
        "sha256 ae53464bf3be… for it",
        "A pin is written only once its file's bytes match it: add the file to the cache "
        "(`profilegen cache add FILE`), or run `profilegen lock` where its host answers.",
    ]
    assert (scratch / "profilegen.lock.json").read_bytes() == before
    assert f"remote patch file {KEY} does not agree with profilegen.lock.json" in _lock_findings(
        scratch
    )


def test_a_new_pin_whose_file_is_in_the_cache_is_verified_and_written(
    scratch: Path, tmp_path: Path
) -> None:
    sha = hashlib.sha256(BODY).hexdigest()
    _repin(scratch, sha, len(BODY))
    blob = tmp_path / "cache" / "blobs" / "sha256" / sha
    blob.parent.mkdir(parents=True)
    blob.write_bytes(BODY)
    run = invoke_in(scratch, "lock", "--offline")
    assert run.code == 0, run.text
    assert f'"sha256": "{sha}"' in (scratch / "profilegen.lock.json").read_text()
    assert f"remote patch file {KEY} does not agree" not in " ".join(_lock_findings(scratch))
    # The other pins are not in this cache: kept as the lock had them, and said so.
    assert "remote patch files (1 verified against their bytes, " in run.err
    assert "not in the patch cache, kept as profilegen.lock.json had them (not verified now)" in (
        run.err
    )


def test_a_file_in_the_cache_that_is_not_the_pinned_one_is_not_pinned(
    scratch: Path, tmp_path: Path
) -> None:
    # The bytes cached under the pin's name are other bytes: never taken for the pinned file.
    sha = hashlib.sha256(BODY).hexdigest()
    _repin(scratch, sha, len(BODY))
    blob = tmp_path / "cache" / "blobs" / "sha256" / sha
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"{{ other }}\n" + b"x" * (len(BODY) - 12))
    run = invoke_in(scratch, "lock", "--offline")
    assert run.code == 1
    assert f"  {KEY} (sha256 {sha[:12]}…): not in the cache (offline)" in run.err


def test_online_a_changed_pin_whose_host_does_not_answer_is_not_written(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROFILEGEN_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # never reached: the pins fail first
    with Blackhole() as hole:
        path = scratch / PATCH
        text = path.read_text()
        start = text.index('base_url: "') + len('base_url: "')
        end = text.index('"', start)
        path.write_text(text[:start] + f"https://127.0.0.1:{hole.port}/p/" + text[end:])
        sha = hashlib.sha256(BODY).hexdigest()
        _repin(scratch, sha, len(BODY))
        before = (scratch / "profilegen.lock.json").read_bytes()
        run = invoke_in(scratch, "lock", "--timeout", "0.5")
        assert hole.accepted >= 1  # the changed pin was downloaded, not copied
    assert run.code == 2, run.text
    assert (
        f"  {KEY} (sha256 {sha[:12]}…): no answer within the 0.5 s deadline; "
        "profilegen.lock.json pins sha256 ae53464bf3be… for it"
    ) in run.err.splitlines()
    assert (scratch / "profilegen.lock.json").read_bytes() == before


# -- weights: unpinned is said; what fetch downloaded is recorded and held ----------------------


@pytest.fixture
def hubbed(tmp_path: Path, isolated_hub_env: None, hub: FakeHub) -> Path:
    """A copy of the repository whose seed profile's repos are on the fake Hub; the lock, as
    shipped, has not resolved them."""
    add_seed_repos(hub)
    return copy_repo(tmp_path / "repo")


def test_unpinned_weights_are_said_by_list_show_and_a_dry_run(hubbed: Path, tmp_path: Path) -> None:
    rows = json.loads(invoke_in(hubbed, "list", "--format", "json").out)
    assert [r["weights_pinned"] for r in rows if r["id"] == SEED] == [False]
    table = invoke_in(hubbed, "list").out.splitlines()
    assert table[0].endswith("  PINNED")
    assert [ln.split()[-1] for ln in table if ln.startswith(f"{SEED} ")] == ["UNPINNED"]
    shown = json.loads(invoke_in(hubbed, "show", SEED, "--format", "json").out)
    assert shown["resolved"]["artifacts"]["weights"]["pin"] == UNPINNED_WORDS
    plan = invoke_in(hubbed, "fetch", SEED, "--model-dir", str(tmp_path / "m"), "--dry-run")
    assert plan.code == 0, plan.text
    assert f"  {UNPINNED_WORDS}" in plan.out.splitlines()


def test_weights_the_lock_resolved_are_pinned_to_its_commit(
    hubbed: Path, hub: FakeHub, tmp_path: Path
) -> None:
    weights = hub.repos[WEIGHTS_REPO]
    lock_repos(hubbed, [weights, hub.repos[DRAFTER_REPO]])
    shown = json.loads(invoke_in(hubbed, "show", SEED, "--format", "json").out)
    assert shown["resolved"]["artifacts"]["weights"]["pin"] == (
        f"pinned to commit {weights.head[:12]} (profilegen.lock.json resolved main)"
    )
    rows = json.loads(invoke_in(hubbed, "list", "--format", "json").out)
    assert [r["weights_pinned"] for r in rows if r["id"] == SEED] == [True]


def test_fetch_records_what_it_downloaded_and_a_later_file_with_other_bytes_fails(
    hubbed: Path, hub: FakeHub, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    first = invoke_in(hubbed, "fetch", SEED, "--model-dir", str(models))
    assert first.code == 0, first.text
    assert (
        f"  {UNPINNED_WORDS}; the sha256 of what came is recorded in .profilegen-fetched.json"
        in first.out.splitlines()
    )
    shard = "model-00002-of-00002.safetensors"
    record = json.loads((models / ".profilegen-fetched.json").read_text())
    weights = hub.repos[WEIGHTS_REPO]
    old = weights.head
    entry = record["artifacts"]["qwen3.8-27b/autoround-fast"]
    assert entry["commit"] == old
    assert entry["files"][shard] == hashlib.sha256(b"\x01\x02" * 1500).hexdigest()
    # (verify also holds the fake repos' few bytes to the registry's declared gigabytes)
    first_verify = invoke_in(hubbed, "verify", SEED, "--model-dir", str(models))
    assert f"  {UNPINNED_WORDS}" in first_verify.out.splitlines()
    assert "is not what `profilegen fetch` downloaded" not in first_verify.out

    # The branch moves: the shard has other bytes (of the same size) at the new head.
    files = {p: f for p, f in weights.commits[old].items()}
    files[shard] = FakeFile(b"\x03\x04" * 1500)
    weights.commit(files)
    later = invoke_in(hubbed, "fetch", SEED, "--model-dir", str(models))
    assert later.code == 1
    path = models / WEIGHTS_DIR / shard
    now, then = (hashlib.sha256(b * 1500).hexdigest()[:16] for b in (b"\x03\x04", b"\x01\x02"))
    said = (
        f"  {path}: sha256 {now}… is not what `profilegen fetch` downloaded at commit {old[:12]} "
        f"({then}…, recorded in "
        f"{models / '.profilegen-fetched.json'}): the file changed since (its branch moved, or "
        f"it was replaced); pin the artifact's revision to {old} to get those, or delete that "
        "record to take the new bytes"
    )
    assert said in later.err.splitlines()
    again = invoke_in(hubbed, "verify", SEED, "--model-dir", str(models))
    assert again.code == 1
    assert said in again.out.splitlines()
