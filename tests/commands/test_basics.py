"""The registry as shipped: list, show, lookup by name, schemas and modelines."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from profilegen.cli import cli
from profilegen.errors import FindingSink
from profilegen.generated.schemas import build_schemas
from profilegen.registry import KINDS
from profilegen.registry.load import MODELINE, read_document

ROOT = Path(__file__).resolve().parents[2]
SEED = "qwen38-27b-dual-dflash15-fast"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", str(ROOT), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def registry_files() -> list[Path]:
    return sorted(p for kind in KINDS for p in (ROOT / "registry" / kind).glob("*.yaml"))


def test_list_json_has_the_qwen38_family() -> None:
    code, out, _ = invoke("list", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    family = [r for r in rows if r["model"] == "qwen3.8-27b"]
    assert len(family) >= 20
    assert SEED in {r["id"] for r in rows}
    assert {"id", "engine", "status", "port", "rig"} <= set(rows[0])


def test_show_resolves_the_seed_profile() -> None:
    code, out, _ = invoke("show", SEED, "--format", "json")
    assert code == 0
    data = json.loads(out)
    env = data["envelope"]
    assert (env["max_model_len"], env["gpu_memory_utilization"], env["kv_cache_memory"]) == (
        244320,
        0.85,
        9000000000,
    )
    assert data["port"] == 8113
    assert data["status"] == "incubating"
    resolved = data["resolved"]
    assert resolved["drafter"]["spec_n_default"] == 15
    assert (
        resolved["artifacts"]["weights"]["repo"] == "born2bewild/Qwen3.8-27B-W4A16-AutoRound-fast"
    )
    assert resolved["drafter"]["repo"] == "syvai/Qwen3.8-27B-DFlash2-W4A16"
    assert resolved["engine"]["image"] == "vllm/vllm-openai:v0.27.1"
    assert resolved["container_name"] == "vllm-qwen38-27b-dual-dflash15-fast"


@pytest.mark.parametrize(
    "name", [SEED, "vllm/qwen38-27b-dual-dflash15-fast", "qwen38-27b-dual-dflash"]
)
def test_profile_names_id_upstream_key_and_prefix(name: str) -> None:
    code, out, _ = invoke("show", name, "--format", "json")
    assert code == 0
    assert json.loads(out)["id"] == SEED


def test_ambiguous_and_unknown_names_are_usage_errors() -> None:
    code, _, err = invoke("show", "qwen38-27b-dual")
    assert code == 2
    assert "ambiguous" in err
    code, _, err = invoke("show", "qwen38-27b-dual-dflash16-fast")
    assert code == 2
    assert "did you mean 'qwen38-27b-dual-dflash15-fast'" in err
    assert "Traceback" not in err


def test_show_yaml_is_parseable() -> None:
    from ruamel.yaml import YAML

    code, out, _ = invoke("show", SEED, "--format", "yaml")
    assert code == 0
    assert YAML(typ="safe").load(out)["id"] == SEED


def test_checked_in_schemas_are_fresh() -> None:
    built = build_schemas()
    on_disk = {p.name for p in (ROOT / "schema").glob("*.json")}
    assert on_disk == set(built), "run `profilegen schema`"
    for name, content in built.items():
        assert (ROOT / "schema" / name).read_bytes() == content, f"schema/{name} is stale"


@pytest.mark.parametrize("path", registry_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_registry_file_names_and_validates_against_its_schema(path: Path) -> None:
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    match = MODELINE.match(first)
    assert match, f"{path.name}: first line must be the schema modeline"
    schema_path = (path.parent / match.group(1)).resolve()
    assert schema_path.parent == ROOT / "schema"
    assert schema_path.name == f"{KINDS[path.parent.name][1]}.schema.json"
    doc = read_document(path, ROOT, FindingSink())
    assert doc is not None
    # As written, before `extends` is resolved.
    _validator(schema_path).validate(doc.data)


@functools.cache
def _validator(schema_path: Path) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_command_check_mode_reports_fresh() -> None:
    code, _, err = invoke("schema", "--check")
    assert code == 0, err


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "profilegen", "--root", str(ROOT), "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert SEED in done.stdout


def test_no_registry_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--root", str(tmp_path), "list"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "no registry/ folder" in result.stderr


def test_unwritable_output_is_a_usage_error_not_a_crash(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = invoke("render", "qwen38-27b-single-iq4xs", "-o", str(blocker / "bundle"))
    assert code == 2
    assert err == f"error: cannot write {blocker / 'bundle'}: Not a directory\n"
    assert "Traceback" not in err and "internal error" not in err
