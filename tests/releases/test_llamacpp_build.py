"""The llama-server build: which source it takes, how a build is keyed, and that a cached
build is found again without building (the real build is the engine tier's, tests/engines)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from profilegen.releases import llamacpp_build as lb
from profilegen.releases.llamacpp_build import nearest_build


def test_the_nearest_source_build_is_taken() -> None:
    versions = ["10227.0.0", "10235.0.0", "10240.0.0", "10248.0.0", "0.3.1"]
    assert nearest_build(10236, versions) == 10235
    assert nearest_build(10238, ["10236.0.0", "10240.0.0"]) == 10236  # a tie: the older
    assert nearest_build(10236, ["0.3.1"]) is None


def test_an_engine_names_its_build() -> None:
    assert lb.engine_build("llama.cpp-b10236") == 10236
    assert lb.engine_build("server-cuda-b9570") == 9570
    with pytest.raises(lb.BuildError, match=r"'beellama-v0\.3\.0' names no llama\.cpp build"):
        lb.engine_build("beellama-v0.3.0")


def test_a_build_is_keyed_by_build_flags_and_compiler() -> None:
    tools = {"c++": "c++ (Debian 12.2.0-14) 12.2.0", "cmake": "cmake version 3.25.1"}
    key = lb.entry_key(10236, lb.CPU_FLAGS, tools)
    assert key.startswith("llama.cpp-b10236-")
    assert key == lb.entry_key(10236, lb.CPU_FLAGS, dict(tools))
    assert key != lb.entry_key(10240, lb.CPU_FLAGS, tools)
    assert key != lb.entry_key(10236, lb.CUDA_FLAGS, tools)
    assert key != lb.entry_key(10236, lb.CPU_FLAGS, {**tools, "c++": "clang 17"})


def test_a_complete_entry_is_found_and_a_half_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROFILEGEN_BUILD_CACHE", str(tmp_path))
    folder = tmp_path / lb.entry_key(10236, lb.CPU_FLAGS, lb.toolchain())
    (folder / "bin").mkdir(parents=True)
    binary = folder / "bin" / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert lb.cached_server(10236) is None  # no build.json: a build that did not finish
    (folder / "build.json").write_text(json.dumps({"source_build": 10235}))
    found = lb.cached_server(10236)
    assert found is not None and found.source_build == 10235 and found.binary == binary
    # ensure_server returns it without building (nothing to download, nothing to compile).
    assert lb.ensure_server(10236).folder == folder
    assert os.access(found.binary, os.X_OK)


@pytest.mark.parametrize(
    "record",
    ["[" * 100_000 + "]" * 100_000, '{"source_build": 1, "pad": "' + "x" * (2**20) + '"}'],
    ids=["nested-past-the-parser", "larger-than-a-record"],
)
def test_a_record_that_is_no_record_is_a_half_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record: str
) -> None:
    monkeypatch.setenv("PROFILEGEN_BUILD_CACHE", str(tmp_path))
    folder = tmp_path / lb.entry_key(10236, lb.CPU_FLAGS, lb.toolchain())
    (folder / "bin").mkdir(parents=True)
    (folder / "build.json").write_text(record)
    assert lb.cached_server(10236) is None
