"""`cache add` answers for each file on one line of its own: a file named with a line break
(a download's name is anyone's) is shown escaped, never as a line that could pass for
`::error::` in a CI log."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import Invoke

FORGED = "a\n::error::forged.patch"
SHA_X = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"  # b"x"
SHA_Y = "a1fce4363854ff888cff4b8e7875d600c2682390412a8cf79b37d0b11148b0fa"  # b"y"
NOT_PINNED = "is not pinned by any patch in the registry"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "cache"))
    (tmp_path / FORGED).write_bytes(b"x")
    (tmp_path / "b.patch").write_bytes(b"y")
    return tmp_path / FORGED, tmp_path / "b.patch"


def test_one_refused_file_is_one_line(invoke: Invoke, files: tuple[Path, Path]) -> None:
    forged, _plain = files
    run = invoke("cache", "add", str(forged))
    assert run.code == 1, run.text
    shown = str(forged).replace("\n", "\\x0a")
    assert run.err == f"error: {shown}: sha256 {SHA_X} {NOT_PINNED}\n"


def test_each_refused_file_is_one_line(invoke: Invoke, files: tuple[Path, Path]) -> None:
    forged, plain = files
    run = invoke("cache", "add", str(forged), str(plain))
    assert run.code == 1, run.text
    shown = str(forged).replace("\n", "\\x0a")
    assert run.err.splitlines() == [
        "error: 2 of 2 file(s) not added to the cache:",
        f"  {shown}: sha256 {SHA_X} {NOT_PINNED}",
        f"  {plain}: sha256 {SHA_Y} {NOT_PINNED}",
    ]
