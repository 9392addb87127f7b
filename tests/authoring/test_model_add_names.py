"""`model add --from-dir` names the files it read or refuses on one line: a file name holding
a line break or an escape sequence (a folder is anyone's download) is shown escaped, never as
a line of its own that could pass for `::error::` or a `check passed`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import checkpoints as ck
from tests.support.cli import Invoke

COMMIT = "0123456789abcdef0123456789abcdef01234567"
FORGED = "a-\n::error::x.gguf"
RED = "b\x1b[31m.gguf"


def _folder(tmp_path: Path, names: list[str]) -> Path:
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"GGUF")  # the magic, then nothing: no header
    return folder


@pytest.mark.parametrize(
    ("names", "gguf", "message"),
    [
        ([FORGED], None, "{folder}: a-\\x0a::error::x.gguf: the header runs past the end of the file"),
        (["m\n::error::x-00001-of-00003.gguf"], None,
         "{folder}: m\\x0a::error::x-00001-of-00003.gguf: the header runs past the end of the "
         "file"),
        ([FORGED, RED], None,
         "{folder} holds 2 GGUF files; pick one with --gguf: a-\\x0a::error::x.gguf, "
         "b\\x1b[31m.gguf"),
        ([FORGED, RED], "zzzzzz",
         "--gguf 'zzzzzz': no such GGUF file in {folder} (it has: a-\\x0a::error::x.gguf, "
         "b\\x1b[31m.gguf)"),
        ([FORGED, RED], ".gguf",
         "--gguf '.gguf' matches 2 files: a-\\x0a::error::x.gguf, b\\x1b[31m.gguf"),
        (["model-\n::error::forged.safetensors", "config.json"], None,
         "{folder}: model-\\x0a::error::forged.safetensors: its first 8 bytes give a header of "
         "0 bytes; a safetensors header holds 2 to 100,000,000: it is not a safetensors file"),
    ],
)  # fmt: skip
def test_a_file_name_is_shown_on_one_line(
    invoke: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    names: list[str],
    gguf: str | None,
    message: str,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = _folder(tmp_path, names)
    if "config.json" in names:
        (folder / "config.json").write_text(json.dumps(ck.DENSE))
        (folder / names[0]).write_bytes(bytes(8))
    pick = ("--gguf", gguf) if gguf else ()
    run = invoke("model", "add", "lab/X-GGUF", "--from-dir", str(folder), "--revision", COMMIT,
                 "--dry-run", *pick)  # fmt: skip
    assert run.code == 2, run.text
    assert run.err == f"error: {message.format(folder=folder)}\n"
