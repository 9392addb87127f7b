"""Every hostile registry ends in a located finding or a clean success: no hang, no crash,
no exit 3, no partial write."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.cases import Case, cases
from tests.support.base import build_base
from tests.support.cli import Run, invoke_in
from tests.support.cliproc import run_cli_process
from tests.support.copies import copy_tree
from tests.support.fakehub import FakeHub
from tests.support.hubenv import LEAKY
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

CASES = cases()
FINDING = re.compile(r"^\S+: (error|warning): \[[a-z0-9-]+\] ")
# The real CLI's bounds for the classes that used to hang or eat memory.
TIME_LIMIT_S = 60
MEMORY_LIMIT = 768 * 2**20  # address space; a normal run needs about 200 MiB


def test_the_corpus_is_large_and_named_uniquely() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 60


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("hostile") / "base")


def materialize(case: Case, base: Path, root: Path) -> None:
    copy_tree(base, root, symlinks=True)
    for rel, content in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        path.write_bytes(data)
    for step in case.setup:
        step(root)


def snapshot(*folders: Path) -> dict[str, object]:
    """Every entry below the folders, without following links or opening special files."""
    seen: dict[str, object] = {}
    for top in folders:
        if not top.exists() and not top.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                mode = path.lstat().st_mode
                if stat.S_ISLNK(mode):
                    seen[str(path)] = ("link", str(path.readlink()))
                elif stat.S_ISREG(mode):
                    seen[str(path)] = path.read_bytes()
                else:
                    seen[str(path)] = stat.S_IFMT(mode)
    return seen


def run_bounded(root: Path, args: list[str]) -> Run:
    return run_cli_process(["--root", str(root), *args], timeout=TIME_LIMIT_S, memory=MEMORY_LIMIT)


@contextlib.contextmanager
def hub_for(case: Case, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The case's fake Hub as HF_ENDPOINT, none of the developer's Hub settings leaking in."""
    if case.hub is None:
        yield
        return
    for name in LEAKY:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")
    with FakeHub() as fake:
        case.hub(fake)
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        yield


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_registry(
    case: Case, base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "root", tmp_path / "out"
    materialize(case, base, root)

    def fill(text: str) -> str:
        return text.replace("{out}", str(out)).replace("{root}", str(root))

    args = [fill(a) for a in case.args]
    for name, value in case.env.items():
        monkeypatch.setenv(name, fill(value))
    before = snapshot(root, out)
    with hub_for(case, monkeypatch, tmp_path):
        run = run_bounded(root, args) if case.bounded else invoke_in(root, *args)
    output = run.out + run.err
    assert "Traceback" not in output and "internal error" not in output, output
    assert run.code == case.code, output
    found = sorted(line for line in output.splitlines() if FINDING.match(line))
    assert found == sorted(case.findings), output
    for line in map(fill, case.says):
        assert line in output.splitlines() or line in output, output
    for text in case.never:
        assert text not in output, output
    for name in case.absent:
        assert not (tmp_path / name).exists(), f"{name} was written on the host"
    if run.code != 0:
        assert snapshot(root, out) == before, "a failed run changed files"
    if case.leaves is not None:
        case.leaves(root, out)
