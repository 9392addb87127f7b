"""Data-driven registry cases: every folder under valid/ or invalid/ is one test."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from profilegen.cli import cli
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

HERE = Path(__file__).resolve().parent
BASE = HERE / "base"
# Files at the top of a case folder that steer the runner instead of being overlaid.
CONTROL = frozenset({"expected.txt", "DELETE", "args", "README.md"})
# A located finding as the text reporter prints it: `file[:line]: error: [rule] message (hint)`.
FINDING = re.compile(r"^\S+: (error|warning): \[[a-z0-9-]+\] ")
# Cases whose expectation is the right behaviour of a known product bug: strict, so the
# fix turns them into failures that say "drop me from this table".
XFAIL: dict[str, str] = {}


def _cases(kind: str) -> list[object]:
    folder = HERE / kind
    names = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else [],
        )
        for name in names
    ]


def invoke(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def regenerate(root: Path) -> None:
    """Derived files come from the tool itself; on a broken registry these just fail."""
    invoke(root, "lock", "--offline")
    invoke(root, "render", "--all")


# Every check in this module reuses one build of the schemas.
pytestmark = pytest.mark.usefixtures("fast_schemas")


@pytest.fixture(scope="module")
def built_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("base") / "root"
    shutil.copytree(BASE, root)
    assert invoke(root, "schema")[0] == 0
    regenerate(root)
    return root


def materialize(case: Path, base: Path, dest: Path) -> Path:
    """A copy of the base with the case's files laid over it and DELETE'd paths removed."""
    shutil.copytree(base, dest)
    for path in sorted(case.rglob("*")):
        rel = path.relative_to(case)
        if path.is_dir() or rel.as_posix() in CONTROL:
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    delete = case / "DELETE"
    if delete.is_file():
        for line in delete.read_text(encoding="utf-8").splitlines():
            name = line.strip()
            if name and not name.startswith("#"):
                target = dest / name
                assert target.exists(), f"DELETE names {name}, which the base does not have"
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink()
    return dest


def command(case: Path) -> list[str]:
    args = case / "args"
    if args.is_file():
        return args.read_text(encoding="utf-8").split()
    return ["check", "--format", "text"]


def finding_lines(text: str) -> list[str]:
    lines = (line.strip() for line in text.splitlines())
    return sorted(line for line in lines if FINDING.match(line))


def expected_lines(case: Path) -> list[str]:
    text = (case / "expected.txt").read_text(encoding="utf-8")
    lines = (line.strip() for line in text.splitlines())
    return sorted(line for line in lines if line and not line.startswith("#"))


def test_xfail_table_names_real_cases() -> None:
    known = {p.name for kind in ("valid", "invalid") for p in (HERE / kind).iterdir()}
    assert set(XFAIL) <= known


def test_base_is_clean(built_base: Path) -> None:
    code, out, err = invoke(built_base, "check", "--format", "text")
    assert (code, finding_lines(out + err)) == (0, []), err


@pytest.mark.parametrize("name", _cases("invalid"))
def test_invalid(name: str, built_base: Path, tmp_path: Path) -> None:
    case = HERE / "invalid" / name
    root = materialize(case, built_base, tmp_path / "root")
    regenerate(root)
    code, out, err = invoke(root, *command(case))
    output = out + err
    assert "Traceback" not in output
    assert "internal error" not in output
    assert finding_lines(output) == expected_lines(case), output
    assert code == 1, output


@pytest.mark.parametrize("name", _cases("valid"))
def test_valid(name: str, built_base: Path, tmp_path: Path) -> None:
    case = HERE / "valid" / name
    root = materialize(case, built_base, tmp_path / "root")
    regenerate(root)
    code, out, err = invoke(root, "check", "--format", "text")
    output = out + err
    assert "Traceback" not in output
    assert "internal error" not in output
    errors = [line for line in finding_lines(output) if "locked from declared facts" not in line]
    assert (code, errors) == (0, []), output
    code, out, err = invoke(root, "list")
    assert code == 0, out + err
