"""Each planted defect in a copy of the real registry is caught by the right rule and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from profilegen.cli import cli
from tests.support.copies import copy_tree
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

from .mutations import MUTATIONS, Mutation

# What `check` reads; docs/ only where the repository has generated pages.


def invoke(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# Every check in this module reuses one build of the schemas.
pytestmark = pytest.mark.usefixtures("fast_schemas")


def findings(root: Path) -> tuple[int, list[dict[str, Any]], str]:
    code, out, err = invoke(root, "check", "--format", "json")
    assert "Traceback" not in out + err
    assert "internal error" not in out + err
    return code, json.loads(out), err


def expected_line(root: Path, mutation: Mutation) -> int | None:
    if mutation.line is None:
        return None
    lines = (root / mutation.file).read_text(encoding="utf-8").splitlines()
    hits = [number for number, text in enumerate(lines, start=1) if mutation.line in text]
    assert len(hits) == 1, f"{mutation.file}: {mutation.line!r} is on lines {hits}, want one"
    return hits[0]


def test_pristine_copy_checks_clean(pristine: Path) -> None:
    code, found, err = findings(pristine)
    errors = [f for f in found if f["severity"] == "error"]
    assert (code, errors) == (0, []), err


def test_names_are_unique() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names))


def _params() -> list[Any]:
    return [
        pytest.param(
            m,
            id=m.name,
            marks=[pytest.mark.xfail(strict=True, reason=m.xfail)] if m.xfail else [],
        )
        for m in MUTATIONS
    ]


@pytest.mark.parametrize("mutation", _params())
def test_mutation_is_caught(mutation: Mutation, pristine: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    copy_tree(pristine, root, link=True)  # mutations write new files
    mutation.apply(root)
    code, found, err = findings(root)
    want = (mutation.rule, mutation.file, expected_line(root, mutation))
    hits = [
        f
        for f in found
        if (f["rule"], f["file"], f["line"]) == want and mutation.message in f["message"]
    ]
    shown = "\n".join(f"{f['file']}:{f['line']}: [{f['rule']}] {f['message']}" for f in found)
    assert hits, f"no {want} finding with {mutation.message!r}; check reported:\n{shown}"
    assert hits[0]["severity"] == mutation.severity
    if mutation.severity == "error":
        assert code == 1, err
