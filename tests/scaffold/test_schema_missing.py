"""A registry whose schema files were never written: one finding that says so, and which
command writes them (a stale file keeps its own)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli import invoke_in


def test_no_schema_files_is_one_finding(catalogue: Path) -> None:
    shutil.rmtree(catalogue / "schema")
    run = invoke_in(catalogue, "check")
    assert run.code == 1
    assert run.out == (
        "schema/: error: [schema-missing] schema/ is missing all 10 schema files "
        "(run `profilegen schema` to write them)\n"
        "check failed: 1 error, 0 warnings\n"
    )
    written = invoke_in(catalogue, "schema")
    assert written.code == 0, written.text
    assert invoke_in(catalogue, "check").out == "check passed: 0 errors, 0 warnings\n"


def test_one_missing_file_is_named(catalogue: Path) -> None:
    (catalogue / "schema/rig.schema.json").unlink()
    run = invoke_in(catalogue, "check")
    assert run.out == (
        "schema/rig.schema.json: error: [schema-missing] schema/rig.schema.json is missing "
        "(run `profilegen schema` to write it)\n"
        "check failed: 1 error, 0 warnings\n"
    )


def test_missing_and_stale_files_are_told_apart(catalogue: Path) -> None:
    (catalogue / "schema/rig.schema.json").unlink()
    (catalogue / "schema/gpu.schema.json").unlink()
    stale = catalogue / "schema/model.schema.json"
    stale.write_text(stale.read_text().replace('"title"', '"description"', 1))
    run = invoke_in(catalogue, "check")
    assert run.code == 1
    assert run.out == (
        "schema/: error: [schema-missing] schema/ is missing 2 schema files: gpu.schema.json, "
        "rig.schema.json (run `profilegen schema` to write them)\n"
        "schema/model.schema.json: error: [schema-stale] schema/model.schema.json is stale "
        "(run `profilegen schema`)\n"
        "check failed: 2 errors, 0 warnings\n"
    )
    checked = invoke_in(catalogue, "schema", "--check")
    assert checked.code == 1
    assert checked.err == (
        "schema/gpu.schema.json: missing (run `profilegen schema`)\n"
        "schema/rig.schema.json: missing (run `profilegen schema`)\n"
        "schema/model.schema.json: stale (run `profilegen schema`)\n"
    )
