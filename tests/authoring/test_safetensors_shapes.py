"""A safetensors header's shapes are counted in whole numbers and bounded: a shape of 100,000
dimensions (an OverflowError, exit 3, when its bytes were a float) or one past any
checkpoint's elements is a clear error, and a long shape is not printed whole."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.support import checkpoints as ck
from tests.support.cli import Invoke

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _folder(tmp_path: Path, tensor: dict[str, object]) -> Path:
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(ck.DENSE))
    text = json.dumps({"w": tensor}).encode()
    text += b" " * (-len(text) % 8)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text)
    return folder


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ([2] * 100_000, "tensor 'w' has a shape of more elements than any checkpoint holds"),
        ([10**30, 10**30], "tensor 'w' has a shape of more elements than any checkpoint holds"),
        ([1] * 20, "tensor 'w' spans 3 bytes; F16 of shape of 20 dimensions takes 2"),
        ([0, 10**30], "tensor 'w' spans 3 bytes; F16 of shape [0, " + str(10**30) + "] takes 0"),
    ],
)
def test_a_shape_is_counted_whole_and_bounded(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: list[int], message: str
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = _folder(tmp_path, {"dtype": "F16", "shape": shape, "data_offsets": [0, 3]})
    run = invoke("model", "add", "lab/X", "--from-dir", str(folder), "--revision", COMMIT,
                 "--dry-run")  # fmt: skip
    assert run.code == 2, run.text
    assert run.err == f"error: {folder}: model.safetensors: {message}\n"
