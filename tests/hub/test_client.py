"""Tests for profilegen.hub over real HTTP against the fake Hub."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_url
from hypothesis import given
from hypothesis import strategies as st

from profilegen.hub.client import offline, verify_artifacts
from profilegen.hub.download import _fnmatch_escape, fetch_artifact
from profilegen.hub.problems import _parse_retry_after
from profilegen.hub.types import (
    ArtifactRequest,
    ArtifactResult,
    FetchPlan,
    FetchResult,
    HubError,
    HubSettings,
)

try:  # rootdir on sys.path (python -m pytest, or a tests/__init__.py added later)
    from tests.support.fakehub import FakeFile, FakeHub, FakeRepo
except ImportError:  # pytest's default rootdir-less import puts tests/ itself on sys.path
    from support.fakehub import FakeFile, FakeHub, FakeRepo  # type: ignore[no-redef]

CONFIG = b'{"architectures": ["Fake"]}'
WEIGHTS = bytes(range(256)) * 8  # 2048 bytes, stored in LFS
TOKENIZER = b"tokenizer" * 10
TOKEN = "hf_right_token"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's or CI's settings must not leak into the fake-Hub runs.
    for name in ("HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


@pytest.fixture
def model(hub: FakeHub) -> FakeRepo:
    return hub.add_repo(
        "acme/model-7b",
        {
            "config.json": CONFIG,
            "model.safetensors": WEIGHTS,
            "tokenizer.json": TOKENIZER,
            "README.md": b"# not declared",
        },
        lfs={"model.safetensors"},
    )


def fast(hub: FakeHub, **overrides: Any) -> HubSettings:
    """Settings for tests: no token, short timeouts, near-zero backoff."""
    base = HubSettings(endpoint=hub.url, token=False, timeout=2.0, retries=2, backoff=0.01)
    return replace(base, **overrides)


def request_for(
    repo: FakeRepo,
    *files: str,
    revision: str | None = "",
    size: int | None = None,
    key: str = "model-7b/bf16",
) -> ArtifactRequest:
    declared = files or ("config.json", "model.safetensors")
    return ArtifactRequest(
        key=key,
        repo=repo.repo_id,
        revision=repo.head if revision == "" else revision,
        files=declared,
        declared_size_bytes=size,
    )


def codes(result: ArtifactResult) -> list[str]:
    return [p.code for p in result.problems]


def verify_one(request: ArtifactRequest, settings: HubSettings) -> ArtifactResult:
    [result] = verify_artifacts([request], settings)
    return result


# -- verification ---------------------------------------------------------------------------------


def test_clean_artifact_returns_commit_files_sizes_and_sha256(
    hub: FakeHub, model: FakeRepo
) -> None:
    size = len(CONFIG) + len(WEIGHTS)
    result = verify_one(
        request_for(model, "model.safetensors", "config.json", size=size), fast(hub)
    )

    assert result.ok, result.problems
    assert result.commit == model.head
    assert [f.path for f in result.files] == ["config.json", "model.safetensors"]
    config, weights = result.files
    assert (config.size, config.sha256) == (len(CONFIG), None)
    assert weights.size == len(WEIGHTS)
    assert weights.sha256 == hashlib.sha256(WEIGHTS).hexdigest()
    assert result.total_size == size
    assert result.gated is False
    # Exactly one call per artifact, with file metadata requested.
    [call] = hub.requests("model_info")
    assert "blobs=true" in call.query
    assert call.authorization is None
    assert hub.count() == 1


def test_empty_allowlist_means_the_whole_repo(hub: FakeHub, model: FakeRepo) -> None:
    request = ArtifactRequest("all", model.repo_id, model.head, (), None)
    result = verify_one(request, fast(hub))
    assert result.ok
    assert [f.path for f in result.files] == [
        "README.md",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
    ]


def test_unknown_repo(hub: FakeHub) -> None:
    request = ArtifactRequest("ghost", "acme/ghost", "a" * 40, ("x.bin",), None)
    result = verify_one(request, fast(hub))
    assert codes(result) == ["repo-not-found"]
    assert result.commit is None and result.files == ()
    message = result.problems[0].message
    assert "ghost" in message and "acme/ghost" in message
    assert hub.count("model_info") == 1  # a definitive answer is not retried


def test_invalid_repo_id_is_reported_without_a_request(hub: FakeHub) -> None:
    request = ArtifactRequest("bad", "acme/bad name", None, (), None)
    result = verify_one(request, fast(hub))
    assert codes(result) == ["revision-unpinned", "invalid-request"]
    assert hub.count() == 0


def test_missing_revision(hub: FakeHub, model: FakeRepo) -> None:
    result = verify_one(request_for(model, revision="b" * 40), fast(hub))
    assert codes(result) == ["revision-not-found"]
    assert hub.count("model_info") == 1


def test_missing_declared_file(hub: FakeHub, model: FakeRepo) -> None:
    request = request_for(model, "config.json", "model-00002.safetensors", size=10**9)
    result = verify_one(request, fast(hub))
    # The size is not judged on an incomplete file set: only the missing file is reported.
    assert codes(result) == ["file-missing"]
    message = result.problems[0].message
    assert "model-00002.safetensors" in message and model.repo_id in message
    assert [f.path for f in result.files] == ["config.json"]


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (2075, []),  # exact
        (2000, []),  # actual is 3.8% above the declaration
        (2170, []),  # actual is 4.4% below
        (1800, ["size-drift"]),  # 15% above
        (2400, ["size-drift"]),  # 13% below
    ],
)
def test_size_tolerance(hub: FakeHub, model: FakeRepo, declared: int, expected: list[str]) -> None:
    assert len(CONFIG) + len(WEIGHTS) == 2075
    result = verify_one(request_for(model, size=declared), fast(hub))
    assert codes(result) == expected
    assert result.total_size == 2075


def test_size_drift_names_a_gb_gib_mix_up(hub: FakeHub) -> None:
    # The checkpoint is 30.9 GiB; the catalogue said "30.9 GB" and meant GiB.
    actual = int(30.9 * 2**30)
    weights = FakeFile(b"", lfs=True, reported_size=actual)
    repo = hub.add_repo("acme/units", {"w.safetensors": weights})
    request = ArtifactRequest("units", repo.repo_id, repo.head, ("w.safetensors",), 30_900_000_000)
    result = verify_one(request, fast(hub))
    assert codes(result) == ["size-drift"]
    assert "+7.4%" in result.problems[0].message
    assert "GiB written as GB" in result.problems[0].message
    assert result.total_size == actual
    # The same figure converted with 2**30 passes.
    converted = replace(request, declared_size_bytes=int(30.9 * 2**30))
    assert verify_one(converted, fast(hub)).ok


def test_gated_repo_without_token_fails(hub: FakeHub) -> None:
    repo = hub.add_repo("acme/gated", {"config.json": CONFIG}, gated="manual", tokens={TOKEN})
    result = verify_one(request_for(repo, "config.json"), fast(hub))
    assert result.gated is True
    assert codes(result) == ["gated-no-access"]
    assert "no token was sent" in result.problems[0].message


def test_gated_repo_with_wrong_token_fails(hub: FakeHub) -> None:
    repo = hub.add_repo("acme/gated", {"config.json": CONFIG}, gated="manual", tokens={TOKEN})
    result = verify_one(request_for(repo, "config.json"), fast(hub, token="hf_other"))
    assert codes(result) == ["gated-no-access"]
    assert "refused" in result.problems[0].message


def test_gated_repo_with_the_right_token_passes(hub: FakeHub) -> None:
    repo = hub.add_repo("acme/gated", {"config.json": CONFIG}, gated="auto", tokens={TOKEN})
    result = verify_one(request_for(repo, "config.json"), fast(hub, token=TOKEN))
    assert result.ok and result.gated is True
    # The access proof is one HEAD on a declared file at the resolved commit.
    [head] = hub.requests("resolve_head")
    assert head.authorization == f"Bearer {TOKEN}"
    assert head.path == f"/acme/gated/resolve/{repo.head}/config.json"


def test_token_from_hf_token_env(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = hub.add_repo("acme/gated", {"config.json": CONFIG}, gated="auto", tokens={TOKEN})
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = verify_one(request_for(repo, "config.json"), fast(hub, token=None))
    assert result.ok


def test_429_then_ok_is_retried(hub: FakeHub, model: FakeRepo) -> None:
    hub.fail("model_info", [429, 429])
    result = verify_one(request_for(model), fast(hub, retries=3))
    assert result.ok
    assert [r.status for r in hub.requests("model_info")] == [429, 429, 200]


def test_retry_after_is_honoured(hub: FakeHub, model: FakeRepo) -> None:
    hub.fail("model_info", [429], retry_after=0.4)
    started = time.monotonic()
    result = verify_one(request_for(model), fast(hub, backoff=0.0))
    assert result.ok
    assert time.monotonic() - started >= 0.4
    assert hub.count("model_info") == 2


def test_persistent_500_fails_after_bounded_retries(hub: FakeHub, model: FakeRepo) -> None:
    hub.fail("model_info", [500] * 10)
    result = verify_one(request_for(model), fast(hub, retries=2))
    assert codes(result) == ["http-error"]
    assert "HTTP 500" in result.problems[0].message
    assert "3 attempts" in result.problems[0].message
    assert hub.count("model_info") == 3


def test_stalled_server_fails_within_bounded_time(hub: FakeHub, model: FakeRepo) -> None:
    hub.stall("model_info")
    started = time.monotonic()
    result = verify_one(request_for(model), fast(hub, timeout=0.5, retries=1))
    elapsed = time.monotonic() - started
    assert codes(result) == ["transport"]
    assert "2 attempts" in result.problems[0].message
    assert 0.9 <= elapsed < 5.0  # 2 attempts x 0.5 s, plus a tiny backoff


def test_unreachable_endpoint_is_a_transport_problem(model: FakeRepo) -> None:
    with FakeHub() as closed:
        endpoint = closed.url  # nothing listens here once the hub stops
    settings = HubSettings(endpoint=endpoint, token=False, timeout=1.0, retries=1, backoff=0.01)
    result = verify_one(request_for(model), settings)
    assert codes(result) == ["transport"]


@pytest.mark.parametrize("revision", [None, "main", "v1.0"])
def test_unpinned_revision_is_flagged_but_still_verified(
    hub: FakeHub, revision: str | None
) -> None:
    repo = hub.add_repo("acme/tagged", {"config.json": CONFIG}, refs={"v1.0"})
    result = verify_one(request_for(repo, "config.json", revision=revision), fast(hub))
    assert codes(result) == ["revision-unpinned"]
    assert repo.head in result.problems[0].message  # tells the user what to pin to
    assert result.commit == repo.head
    assert [f.path for f in result.files] == ["config.json"]


def test_results_keep_request_order(hub: FakeHub) -> None:
    requests = []
    for index in range(12):
        repo = hub.add_repo(f"acme/m{index}", {"config.json": CONFIG})
        # Early requests answer last, so completion order is the reverse of request order.
        hub.repo_latency[repo.repo_id] = 0.02 * (12 - index)
        requests.append(request_for(repo, "config.json", key=f"m{index}"))
    requests.insert(5, ArtifactRequest("ghost", "acme/ghost", None, (), None))
    seen: list[str] = []
    results = verify_artifacts(
        requests, fast(hub, workers=16), progress=lambda r: seen.append(r.request.key)
    )
    assert [r.request for r in results] == requests
    assert sorted(seen) == sorted(r.key for r in requests)
    assert seen != [r.key for r in requests]  # progress reports in completion order
    assert "repo-not-found" in codes(results[5])


def test_endpoint_from_environment_set_after_import(
    hub: FakeHub, model: FakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    result = verify_one(request_for(model), replace(fast(hub), endpoint=None))
    assert result.ok
    assert hub.count("model_info") == 1


def test_offline_mode_refuses_to_verify(
    hub: FakeHub, model: FakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert offline()
    with pytest.raises(HubError, match="HF_HUB_OFFLINE"):
        verify_artifacts([request_for(model)], fast(hub))
    assert hub.count() == 0


def test_no_requests_no_calls(hub: FakeHub) -> None:
    assert verify_artifacts([], fast(hub)) == []
    assert hub.count() == 0


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError):
        HubSettings(workers=0)
    with pytest.raises(ValueError):
        HubSettings(timeout=0)
    with pytest.raises(ValueError):
        ArtifactRequest("k", "a/b", None, (), 10, size_tolerance=-0.1)


# -- fetching -------------------------------------------------------------------------------------


def downloaded_files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(root).parts
    )


def test_fetch_downloads_exactly_the_declared_files(
    hub: FakeHub, model: FakeRepo, tmp_path: Path
) -> None:
    target = tmp_path / "model"
    result = fetch_artifact(request_for(model), target, fast(hub))

    assert isinstance(result, FetchResult)
    assert result.revision == model.head
    assert downloaded_files(target) == ["config.json", "model.safetensors"]
    assert (target / "model.safetensors").read_bytes() == WEIGHTS
    assert result.paths == (target / "config.json", target / "model.safetensors")
    fetched = sorted(r.path.rsplit("/", 1)[-1] for r in hub.requests("resolve_get"))
    assert fetched == ["config.json", "model.safetensors"]
    # Every request is pinned to the verified commit.
    assert all(model.head in r.path for r in hub.requests("resolve_get"))


def test_second_fetch_downloads_nothing(hub: FakeHub, model: FakeRepo, tmp_path: Path) -> None:
    target = tmp_path / "model"
    fetch_artifact(request_for(model), target, fast(hub))
    hub.clear_log()

    again = fetch_artifact(request_for(model), target, fast(hub))

    assert again.paths[1].read_bytes() == WEIGHTS
    assert hub.count("resolve_get") == 0
    assert hub.count("tree") == 0
    assert [r.route for r in hub.log] == ["model_info"]  # only the existence check


def test_fetch_escapes_glob_characters_in_names(hub: FakeHub, tmp_path: Path) -> None:
    repo = hub.add_repo("acme/globby", {"w[1].bin": b"one", "w1.bin": b"other", "w*.bin": b"s"})
    target = tmp_path / "globby"
    fetch_artifact(request_for(repo, "w[1].bin"), target, fast(hub))
    assert downloaded_files(target) == ["w[1].bin"]


def test_fetch_whole_repo_when_allowlist_is_empty(
    hub: FakeHub, model: FakeRepo, tmp_path: Path
) -> None:
    request = ArtifactRequest("all", model.repo_id, model.head, (), None)
    result = fetch_artifact(request, tmp_path / "all", fast(hub))
    assert downloaded_files(tmp_path / "all") == [f.path for f in result.files]
    assert len(result.files) == 4


def test_fetch_missing_declared_file_is_an_error(
    hub: FakeHub, model: FakeRepo, tmp_path: Path
) -> None:
    target = tmp_path / "model"
    with pytest.raises(HubError, match="nope.safetensors") as caught:
        fetch_artifact(request_for(model, "config.json", "nope.safetensors"), target, fast(hub))
    assert [p.code for p in caught.value.problems] == ["file-missing"]
    assert hub.count("resolve_get") == 0
    assert not target.exists()


def test_fetch_gated_without_access_is_an_error(hub: FakeHub, tmp_path: Path) -> None:
    repo = hub.add_repo("acme/gated", {"config.json": CONFIG}, gated="manual", tokens={TOKEN})
    with pytest.raises(HubError) as caught:
        fetch_artifact(request_for(repo, "config.json"), tmp_path / "g", fast(hub))
    assert [p.code for p in caught.value.problems] == ["gated-no-access"]
    assert hub.count("resolve_get") == 0


def test_fetch_unpinned_revision_downloads_the_resolved_commit(
    hub: FakeHub, model: FakeRepo, tmp_path: Path
) -> None:
    result = fetch_artifact(request_for(model, revision="main"), tmp_path / "m", fast(hub))
    assert result.revision == model.head
    assert [p.code for p in result.problems] == ["revision-unpinned"]
    assert all(model.head in r.path for r in hub.requests("resolve_get"))


def test_dry_run_lists_the_plan_and_downloads_nothing(
    hub: FakeHub, model: FakeRepo, tmp_path: Path
) -> None:
    target = tmp_path / "model"
    plan = fetch_artifact(request_for(model), target, fast(hub), dry_run=True)

    assert isinstance(plan, FetchPlan)
    assert (plan.repo, plan.revision, plan.local_dir) == (model.repo_id, model.head, target)
    assert [(f.path, f.size, f.will_download) for f in plan.files] == [
        ("config.json", len(CONFIG), True),
        ("model.safetensors", len(WEIGHTS), True),
    ]
    assert plan.download_bytes == len(CONFIG) + len(WEIGHTS)
    assert hub.count("resolve_get") == 0
    assert not target.exists()  # a plan leaves no trace

    fetch_artifact(request_for(model), target, fast(hub))
    (target / "config.json").unlink()
    hub.clear_log()
    replan = fetch_artifact(request_for(model), target, fast(hub), dry_run=True)
    assert [f.path for f in replan.to_download] == ["config.json"]
    assert replan.download_bytes == len(CONFIG)
    assert hub.count("resolve_get") == 0
    assert not (target / "config.json").exists()


def test_fetch_refuses_offline_mode(
    hub: FakeHub, model: FakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubError):
        fetch_artifact(request_for(model), tmp_path / "m", fast(hub))
    assert hub.count() == 0


def test_fetch_follows_a_paginated_tree(hub: FakeHub, model: FakeRepo, tmp_path: Path) -> None:
    hub.page_size = 1
    request = ArtifactRequest("all", model.repo_id, model.head, (), None)
    fetch_artifact(request, tmp_path / "all", fast(hub))
    assert len(downloaded_files(tmp_path / "all")) == 4
    assert hub.count("tree") == 4


# -- the fake itself -----------------------------------------------------------------------------


def test_fake_hub_serves_the_library_routes(hub: FakeHub, model: FakeRepo) -> None:
    api = HfApi(endpoint=hub.url, token=False)
    infos = api.get_paths_info(model.repo_id, ["config.json", "nope.bin"], revision=model.head)
    assert [i.path for i in infos] == ["config.json"]  # missing paths are dropped, as upstream
    assert api.list_repo_files(model.repo_id, revision="main") == [
        "README.md",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
    ]
    url = hf_hub_url(model.repo_id, "model.safetensors", revision="main", endpoint=hub.url)
    meta = get_hf_file_metadata(url, token=False)
    assert (meta.commit_hash, meta.etag, meta.size) == (
        model.head,
        hashlib.sha256(WEIGHTS).hexdigest(),
        len(WEIGHTS),
    )
    assert hub.count("paths_info") == 1 and hub.count("resolve_head") == 1


# -- helpers --------------------------------------------------------------------------------------


@given(st.text(alphabet="ab[]*?!-./", min_size=1, max_size=12), st.text(alphabet="ab[]*?!-./"))
def test_fnmatch_escape_matches_only_itself(name: str, other: str) -> None:
    pattern = _fnmatch_escape(name)
    assert fnmatchcase(name, pattern)
    assert fnmatchcase(other, pattern) == (other == name)


@pytest.mark.parametrize(
    ("header", "expected"),
    [("2", 2.0), ("0.25", 0.25), ("-3", 0.0), ("soon", None), (None, None)],
)
def test_parse_retry_after(header: str | None, expected: float | None) -> None:
    assert _parse_retry_after(header) == expected
