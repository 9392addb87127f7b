"""`lock` writes a remote patch pin only once the file's bytes match it: a wrong pin stays an
error after `lock --offline`, on a scratch copy of the repository and a patch cache of the
test's own (no network)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from profilegen.check.rules import CheckContext
from profilegen.check.rules.lockfile import lock as lock_rule
from profilegen.registry import open_registry
from tests.support.blackhole import Blackhole
from tests.support.cli import invoke_in
from tests.support.repo import copy_repo

PATCH = "registry/patches/google-canonical-chat-template-vllm-v0271.yaml"
KEY = "google-canonical-chat-template-vllm-v0271/chat_template.jinja"
PINNED = "ae53464bf3be25802b3a5b37def7fd89667067d7577049b3b2d74c4d8de4c6d4"
BODY = b"{{ messages }}\n"


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
