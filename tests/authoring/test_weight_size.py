"""`model add --from-dir` sizes the weights from what the folder holds (the safetensors index,
safetensors headers, GGUF headers), else estimates them from config.json and says so, else
records the size as unknown: `fit` and `new` then refuse to size a profile, and `check` says
it cannot judge one. Never the few bytes of the files that happen to be in the folder."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from profilegen.model.common import Size
from profilegen.model.model import FactOrigin, Model
from tests.support import checkpoints as ck
from tests.support.cli import Invoke, Run

pytestmark = pytest.mark.usefixtures("isolated_hub_env")

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SHARD1, SHARD2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def folder_with(tmp_path: Path, config: dict[str, Any], name: str = "ckpt") -> Path:
    """The small files CONTRIBUTING asks for: config.json and generation_config.json."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "generation_config.json").write_text(json.dumps(ck.GENERATION))
    return folder


def add(invoke: Invoke, repo: str, folder: Path, *more: str) -> Run:
    return invoke("model", "add", repo, "--from-dir", str(folder), "--revision", COMMIT, *more)


def dry(invoke: Invoke, repo: str, folder: Path) -> tuple[Run, Model]:
    run = add(invoke, repo, folder, "--dry-run")
    assert run.code == 0, run.text
    return run, Model.model_validate(YAML(typ="safe", pure=True).load(run.out))


def size_origin(model: Model, variant: str) -> tuple[str, str | None, str | None]:
    """(file, key, estimate) the size of `variant` was recorded from."""
    found = model.provenance.facts[f"artifacts.{variant}.size"]
    assert isinstance(found, FactOrigin)
    return model.provenance.sources[found.source].file, found.key, found.estimate


def test_the_safetensors_index_gives_the_size(invoke: Invoke, tmp_path: Path) -> None:
    folder = folder_with(tmp_path, ck.DENSE)
    index = {
        "metadata": {"total_size": 16_060_522_496},
        "weight_map": {"lm_head.weight": "model-00004-of-00004.safetensors"},
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    run, model = dry(invoke, "lab/Dense-8B", folder)
    assert model.artifacts["bf16"].size == Size(value=16.06, unit="GB")
    assert size_origin(model, "bf16") == (
        "model.safetensors.index.json",
        "metadata.total_size",
        None,
    )
    assert run.err.splitlines()[0] == (
        f"read {folder}: config.json, generation_config.json, model.safetensors.index.json"
    )


def test_safetensors_headers_give_the_size_even_of_a_copy_cut_after_its_header(
    invoke: Invoke, tmp_path: Path
) -> None:
    folder = folder_with(tmp_path, ck.DENSE)
    first = ck.write_safetensors(
        folder / SHARD1, {"model.embed_tokens.weight": ("BF16", [1000, 1000])}
    )
    second = ck.write_safetensors(
        folder / SHARD2,
        {"lm_head.weight": ("BF16", [500, 1000]), "model.norm.weight": ("F32", [1000])},
    )
    # The second shard holds only its first bytes (its header): the header says the rest.
    path = folder / SHARD2
    headers = [8 + struct.unpack("<Q", (folder / n).read_bytes()[:8])[0] for n in (SHARD1, SHARD2)]
    path.write_bytes(path.read_bytes()[: headers[1]])
    run, model = dry(invoke, "lab/Dense-8B", folder)
    assert first + second > 3_000_000
    assert model.artifacts["bf16"].size == Size(value=round((first + second) / 1e6, 2), unit="MB")
    assert size_origin(model, "bf16") == (SHARD1, "headers of 2 files", None)
    assert run.err.splitlines()[0] == (
        f"read {folder}: config.json, generation_config.json, {SHARD1} and 1 more "
        f"(headers, {sum(headers):,} bytes)"
    )


def test_a_missing_shard_leaves_the_estimate(invoke: Invoke, tmp_path: Path) -> None:
    folder = folder_with(tmp_path, ck.DENSE)
    ck.write_safetensors(folder / SHARD1, {"model.embed_tokens.weight": ("BF16", [64, 64])})
    run, model = dry(invoke, "lab/Dense-8B", folder)
    assert (
        "note: model is split into 2 safetensors files, the folder holds 1: their headers "
        "cannot size the weights"
    ) in run.err.splitlines()
    assert size_origin(model, "bf16")[2] is not None  # the estimate, as below


def test_a_file_that_only_says_safetensors_is_refused(
    repo: Path, invoke: Invoke, tmp_path: Path
) -> None:
    folder = folder_with(tmp_path, ck.DENSE)
    (folder / SHARD1).write_bytes(b"\x01" * 3000)
    (folder / SHARD2).write_bytes(b"\x02" * 1500)
    models = sorted((repo / "registry" / "models").iterdir())
    run = add(invoke, "lab/Dense-8B", folder)
    length = struct.unpack("<Q", b"\x01" * 8)[0]
    assert (run.code, run.err) == (
        2,
        f"error: {folder}: {SHARD1}: its first 8 bytes give a header of {length:,} bytes; a "
        "safetensors header holds 2 to 100,000,000: it is not a safetensors file\n",
    )
    assert sorted((repo / "registry" / "models").iterdir()) == models


def test_gguf_headers_give_the_size_even_of_a_copy_cut_after_its_header(
    invoke: Invoke, tmp_path: Path
) -> None:
    whole = ck.write_gguf(tmp_path / "source.gguf")
    folders = [tmp_path / "whole", tmp_path / "cut"]
    for folder, data in zip(folders, (whole, whole[: len(whole) - (1 << 20)]), strict=True):
        folder.mkdir()
        (folder / "Tiny-Q4_K_M.gguf").write_bytes(data)
    for folder in folders:
        _run, model = dry(invoke, "lab/Tiny-GGUF", folder)
        (variant,) = model.artifacts
        assert model.artifacts[variant].size == Size(value=round(len(whole) / 1e6, 2), unit="MB")
        assert size_origin(model, variant) == ("Tiny-Q4_K_M.gguf", "tensor_infos", None)


def test_config_json_alone_gives_an_estimate_said_to_be_one(invoke: Invoke, tmp_path: Path) -> None:
    embedding, rest = ck.parameters(ck.MOE)
    assert embedding + rest == 30_531_911_680  # Qwen3-30B-A3B's shape
    run, model = dry(invoke, "lab/Moe-30B", folder_with(tmp_path, ck.MOE))
    (variant,) = model.artifacts
    expected = embedding * 2 + rest * 4.25 / 8  # int4 with its scales; 16-bit embeddings
    assert model.artifacts[variant].size == Size(value=round(expected / 1e9, 2), unit="GB")
    how = (
        "30.53B parameters implied by config.json x 4.25 bits (int4 from quantization_config, "
        "with its scales), embeddings at 2 bytes (torch_dtype bfloat16)"
    )
    assert size_origin(model, variant) == ("config.json", None, how)
    assert (
        f"note: the size of the {variant} weights is an estimate: {how} (the folder holds "
        "neither model.safetensors.index.json nor the weights); `profilegen lock` online reads "
        "the real size"
    ) in run.err.splitlines()


def test_an_unknown_size_stays_unknown_and_fit_refuses_to_guess(
    repo: Path, invoke: Invoke, tmp_path: Path
) -> None:
    config = {k: v for k, v in ck.DENSE.items() if k != "torch_dtype"}
    run = add(invoke, "lab/Plain-8B", folder_with(tmp_path, config))
    assert run.code == 0, run.text
    assert (
        "note: the size of the bf16 weights is unknown: the folder holds neither "
        "model.safetensors.index.json nor the weights, and config.json does not say how many "
        "bytes a parameter takes (it states no torch_dtype). `profilegen fit` and `new` cannot "
        "size a profile of this model until `profilegen lock` reads the size on the Hub (or add "
        "it again with the index or the weights' files in the folder)"
    ) in run.err.splitlines()
    assert "  profilegen lock   # online: the weights' size, which fit needs" in run.out
    text = (repo / "registry" / "models" / "plain-8b.yaml").read_text()
    model = Model.model_validate(YAML(typ="safe", pure=True).load(text))
    assert model.artifacts["bf16"].size is None
    assert "artifacts.bf16.size" not in model.provenance.facts
    assert (
        "# The size of bf16 is unknown: fit cannot size a profile of it until `profilegen lock` "
        "reads it on the Hub." in text.splitlines()
    )
    line = text.splitlines().index("  bf16:") + 1
    why = (
        f"registry/models/plain-8b.yaml:{line}: the size of plain-8b/bf16 is unknown, so fit "
        "cannot size its weights (run `profilegen lock` online to read it from the Hub, or state "
        "its size there)"
    )
    # `new` proposes no context it cannot size, and writes nothing.
    made = invoke("new", "plain-mine", "--model", "plain-8b", "--rig", "1x3090")
    assert (made.code, made.err) == (1, f"error: fit cannot size plain-8b: {why}\n")
    assert not (repo / "registry" / "profiles" / "plain-mine.yaml").exists()
    # Given a context, the profile is written; fit refuses it and check flags it.
    made = invoke(
        "new", "plain-mine", "--model", "plain-8b", "--rig", "1x3090",
        "--set", "envelope.max_model_len=8192",
    )  # fmt: skip
    assert made.code == 0, made.text
    fitted = invoke("fit", "plain-mine")
    assert (fitted.code, fitted.err) == (1, f"error: {why}\n")
    checked = invoke("check", "--verbose")
    profile = (repo / "registry" / "profiles" / "plain-mine.yaml").read_text().splitlines()
    at = profile.index("id: plain-mine") + 1
    assert (
        f"registry/profiles/plain-mine.yaml:{at}: warning: [fit-capacity] cannot predict the "
        f"fit: {why}"
    ) in checked.out.splitlines()
