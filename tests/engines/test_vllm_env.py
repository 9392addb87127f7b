"""vLLM's CPU build is installed once per machine and kept: a later run finds it without pip
(no network), and a build that fails leaves nothing behind that a later run would take."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from profilegen.facts.releases import ReleaseError
from profilegen.releases import vllm_env


def test_a_kept_environment_is_found_without_pip(
    real_vllm: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pip(*args: Any) -> str:
        raise AssertionError(f"pip was run: {args}")

    monkeypatch.setattr(vllm_env, "run_pip", no_pip)
    env = vllm_env.ensure_env()
    assert str(env.python) == real_vllm["env"]["python"]
    assert env.version == "0.27.1+cpu"
    assert env.info["torch"].endswith("+cpu")
    assert (env.package_dir / "__init__.py").is_file()
    assert vllm_env.cached_env() == env


def test_a_failed_install_leaves_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(python: Path, args: list[str], what: str) -> str:
        raise ReleaseError(f"cannot {what}: no package index here")

    def make_venv(argv: list[str], what: str) -> str:
        # Only the folder: a real `python -m venv` installs pip (seconds of CPU) for nothing.
        assert argv[1:3] == ["-m", "venv"], argv
        (Path(argv[-1]) / "bin").mkdir(parents=True)
        return ""

    monkeypatch.setenv("PROFILEGEN_BUILD_CACHE", str(tmp_path))
    monkeypatch.setattr(vllm_env, "run_pip", refuse)
    monkeypatch.setattr(vllm_env, "_run", make_venv)
    with pytest.raises(ReleaseError, match=r"^cannot install torch==2\.13\.0 \(CPU\): no package"):
        vllm_env.ensure_env()
    key = vllm_env.entry_key()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{key}.lock"]
    assert vllm_env.cached_env() is None


def test_an_entry_without_its_record_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROFILEGEN_BUILD_CACHE", str(tmp_path))
    folder = tmp_path / vllm_env.entry_key()
    (folder / "venv" / "bin").mkdir(parents=True)
    assert vllm_env.cached_env() is None
    (folder / "build.json").write_text(json.dumps({"package_dir_in_venv": "lib/vllm"}))
    assert vllm_env.cached_env() is None  # no interpreter, no package
