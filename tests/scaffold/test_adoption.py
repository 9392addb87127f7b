"""What a catalogue adopts: the reusable workflow, the hooks, and the files init writes for
them, each validated by the tool that reads it (GitHub's workflow schema, pre-commit's loader)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from check_jsonschema.cli.main_command import main as check_jsonschema
from click.testing import CliRunner
from pre_commit.clientlib import load_config, load_manifest
from ruamel.yaml import YAML

from profilegen.scaffold.packaged import PRE_COMMIT, REPOSITORY, WORKFLOW

REPO = Path(__file__).resolve().parents[2]
REUSABLE = REPO / ".github/workflows/check-registry.yml"
HOOKS = ["profilegen-check", "profilegen-render"]


def _validate_workflow(*paths: Path) -> tuple[int, str]:
    args = ["--builtin-schema", "vendor.github-workflows", *map(str, paths)]
    result = CliRunner().invoke(check_jsonschema, args)
    return result.exit_code, result.output


def test_the_workflows_are_valid_github_workflows(initialised: Path) -> None:
    code, output = _validate_workflow(
        REUSABLE, REPO / ".github/workflows/profilegen.yml", initialised / WORKFLOW
    )
    assert (code, output.strip()) == (0, "ok -- validation done")


def test_the_workflow_schema_does_catch_a_broken_input(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(REUSABLE.read_text().replace("type: boolean", "type: flag", 1))
    code, output = _validate_workflow(broken)
    assert code == 1
    assert "Schema validation errors were encountered." in output


def _yaml(path: Path) -> dict[str, Any]:
    data = YAML(typ="safe").load(path.read_text())
    assert isinstance(data, dict)
    return data


def test_inits_workflow_calls_the_reusable_one_of_this_release(initialised: Path) -> None:
    version = metadata.version("profilegen")
    job = _yaml(initialised / WORKFLOW)["jobs"]["check"]
    assert job["uses"] == (f"{REPOSITORY}/.github/workflows/check-registry.yml@v{version}")
    inputs = _yaml(REUSABLE)["on"]["workflow_call"]["inputs"]
    required = {name for name, spec in inputs.items() if spec.get("required")}
    assert set(job["with"]) <= set(inputs)
    assert required <= set(job["with"])
    assert job["with"]["profilegen-version"] == version


def test_the_reusable_workflow_installs_profilegen_and_runs_check_for_github() -> None:
    text = REUSABLE.read_text()
    assert f'"profilegen @ git+https://github.com/{REPOSITORY}@$REF"' in text
    assert 'python -m pip install "profilegen==$VERSION"' in text
    assert "set -- --format github" in text and 'profilegen check "$@"' in text
    # Inputs reach the shell through the environment only.
    runs = [step["run"] for step in _yaml(REUSABLE)["jobs"]["check"]["steps"] if "run" in step]
    assert runs and not any("${{" in run for run in runs)


def test_the_hooks_load_as_pre_commit_reads_them() -> None:
    hooks = load_manifest(str(REPO / ".pre-commit-hooks.yaml"))
    assert [h["id"] for h in hooks] == HOOKS
    assert [h["entry"] for h in hooks] == ["profilegen check", "profilegen render --all --check"]
    for hook in hooks:
        assert (hook["language"], hook["pass_filenames"]) == ("python", False)


@pytest.mark.parametrize(
    ("path", "runs"),
    [
        ("registry/rigs/1x3090.yaml", HOOKS),
        ("compose/a-profile/compose.yaml", HOOKS),
        ("docs/CATALOG.md", HOOKS),
        ("profilegen.lock.json", HOOKS),
        ("schema/rig.schema.json", ["profilegen-check"]),
        ("README.md", []),
        ("tests/test_x.py", []),
    ],
)
def test_the_hooks_run_for_the_files_of_a_registry(path: str, runs: list[str]) -> None:
    hooks = load_manifest(str(REPO / ".pre-commit-hooks.yaml"))
    assert [h["id"] for h in hooks if re.search(h["files"], path)] == runs


def test_inits_pre_commit_config_pins_this_release_and_both_hooks(initialised: Path) -> None:
    config = load_config(str(initialised / PRE_COMMIT))
    [repo] = config["repos"]
    assert repo["repo"] == f"https://github.com/{REPOSITORY}"
    assert repo["rev"] == f"v{metadata.version('profilegen')}"
    assert [h["id"] for h in repo["hooks"]] == HOOKS


def test_the_readme_shows_this_release() -> None:
    version = metadata.version("profilegen")
    readme = (REPO / "README.md").read_text()
    for pinned in (
        f"pip install profilegen=={version}",
        f"rev: v{version}",
        f"check-registry.yml@v{version}",
        f'profilegen-version: "{version}"',
    ):
        assert pinned in readme
