"""A checkpoint's counts are read as facts a registry can hold: a layer count, context or
sampling value past 2^53 (or not finite) is refused at the key it was read from, not at a
registry file that was never written; and layer kinds are counted, not looped over (a
hybrid config of 10^30 layers hung `model add`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from profilegen.authoring.facts import every_from, every_nth
from tests.support import checkpoints as ck
from tests.support.cli import Invoke

COMMIT = "0123456789abcdef0123456789abcdef01234567"
CAP = "past any checkpoint's (a fact is finite and at most 9,007,199,254,740,992)"


def _layers(config: dict[str, Any], layers: int) -> dict[str, Any]:
    out = copy.deepcopy(config)
    text = out.get("text_config", out)
    text["num_hidden_layers"] = layers
    text.pop("layer_types", None)
    return out


def _add(invoke: Invoke, tmp_path: Path, config: dict[str, Any]) -> Any:
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return invoke("model", "add", "lab/X", "--from-dir", str(folder), "--revision", COMMIT,
                  "--dry-run")  # fmt: skip


@pytest.mark.parametrize("config", [ck.QWEN_HYBRID, ck.GEMMA_SWA], ids=["hybrid", "sliding"])
def test_a_layer_count_past_any_checkpoint_is_refused_at_its_key(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any]
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = _add(invoke, tmp_path, _layers(config, 10**30))
    assert run.code == 2, run.text
    key = "text_config.num_hidden_layers" if "text_config" in config else "num_hidden_layers"
    assert run.err == (f"error: {tmp_path / 'checkpoint'}: config.json: {key} is {10**30}, {CAP}\n")


def test_the_largest_layer_count_is_counted_at_once(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = _add(invoke, tmp_path, _layers(ck.QWEN_HYBRID, 2**53))
    assert run.code == 0, run.text
    assert f"num_layers: {2**53}" in run.out


def test_counting_matches_the_layers_one_by_one() -> None:
    for layers in range(40):
        for n in range(1, 9):
            assert every_nth(layers, n) == sum(1 for i in range(layers) if (i + 1) % n == 0)
            for offset in range(12):
                assert every_from(layers, n, offset) == sum(
                    1 for i in range(layers) if i % n == offset
                )


def test_a_gguf_value_past_any_checkpoint_is_refused_at_its_key(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gguf
    import numpy as np

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    writer = gguf.GGUFWriter(str(folder / "m.gguf"), "llama")
    writer.add_uint64("llama.block_count", 2**64 - 1)
    writer.add_tensor("token_embd.weight", np.zeros(64, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    run = invoke("model", "add", "lab/X-GGUF", "--from-dir", str(folder), "--revision", COMMIT,
                 "--dry-run")  # fmt: skip
    assert run.code == 2, run.text
    assert run.err == f"error: {folder}: m.gguf: llama.block_count is {2**64 - 1}, {CAP}\n"
