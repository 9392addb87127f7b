"""`fit log FILE --record`: one boot log is one record, on the rig the log shows, and a log
whose lines no boot can print (nan, a negative size, buffers beyond the card) is refused with
the line."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from profilegen.fit.logs import LogError, parse_log
from tests.support.cli import invoke_in

from .conftest import GGUF, MTP
from .test_fromlog import LLAMA, VLLM


def evidence(repo: Path, profile: str) -> list[dict[str, object]]:
    data = YAML(typ="safe").load((repo / "registry/profiles" / f"{profile}.yaml").read_text())
    records: list[dict[str, object]] = data["evidence"]
    return records


def test_the_same_log_recorded_twice_changes_the_registry_once(repo: Path, tmp_path: Path) -> None:
    first = invoke_in(repo, "fit", "log", str(VLLM), "--record")
    assert first.code == 0, first.text
    path = repo / "registry/profiles" / f"{MTP}.yaml"
    once = path.read_text()
    renamed = tmp_path / "another-name.log"
    renamed.write_bytes(VLLM.read_bytes())  # the same log under another name: the same boot
    again = invoke_in(repo, "fit", "log", str(renamed), "--record", "--profile", MTP)
    assert again.code == 0, again.text
    key = evidence(repo, MTP)[-1]["key"]
    assert again.err == (
        f"this log is already recorded as {key} in registry/profiles/{MTP}.yaml: nothing changed\n"
    )
    assert path.read_text() == once


def test_the_rig_comes_from_the_cards_the_log_shows(repo: Path) -> None:
    # An H200 boot of a profile whose rig is one 3090: recorded on the H200.
    run = invoke_in(repo, "fit", "log", str(LLAMA), "--profile", GGUF, "--record")
    assert run.code == 0, run.text
    # Fitted on the cards it ran on too: predicted and measured compare on one H200.
    assert f"profile {GGUF} on llama.cpp-b10236, rig 1xh200" in run.out
    assert f"recorded the boot as evidence in registry/profiles/{GGUF}.yaml (rig 1xh200)" in run.err
    assert evidence(repo, GGUF)[-1]["rig"] == "1xh200"


def test_a_rig_the_log_contradicts_is_refused_naming_both(repo: Path) -> None:
    before = (repo / "registry/profiles" / f"{GGUF}.yaml").read_text()
    run = invoke_in(repo, "fit", "log", str(LLAMA), "--profile", GGUF, "--record", "--rig",
                    "1x3090")  # fmt: skip
    assert run.code == 2, run.text
    assert run.err == (
        "error: the log shows 1x h200; --rig 1x3090 is 1x rtx-3090: a boot is recorded on the "
        "cards it ran on\n"
    )
    tp = invoke_in(repo, "fit", "log", str(VLLM), "--record", "--rig", "1x3090")
    assert (tp.code, tp.err) == (2, "error: --tp 2 needs 2 GPUs; rig 1x3090 has 1\n")
    assert (repo / "registry/profiles" / f"{GGUF}.yaml").read_text() == before


def _with(path: Path, after: str, extra: str) -> tuple[str, int]:
    """The log with `extra` lines after the first line holding `after`; the first extra's
    line number."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if after in line) + 1
    return "\n".join([*lines[:at], extra, *lines[at:]]) + "\n", at + 1


@pytest.mark.parametrize(
    ("log", "after", "extra", "message"),
    [
        (
            VLLM, "Available KV cache memory: 9.05 GiB",
            "(Worker_TP1 pid=202) INFO [gpu_worker.py:563] Available KV cache memory: nan GiB",
            "the available KV cache memory is 'nan', not a size a boot can log",
        ),
        (
            VLLM, "Model loading took",
            "(Worker_TP1 pid=202) INFO Model loading took -9.14 GiB memory and 1 seconds",
            "the model loading size is '-9.14', not a size a boot can log",
        ),
        (
            VLLM, "GPU KV cache size",
            "(EngineCore pid=150) INFO [kv_cache_utils.py:2235] GPU KV cache size: inf tokens",
            "the GPU KV cache size is 'inf', not a size a boot can log",
        ),
        (
            LLAMA, "CUDA0 KV buffer size =  4608.00 MiB",
            "0.07.490.769 I llama_kv_cache:      CUDA0 KV buffer size =  -4608.00 MiB",
            "the KV buffer size on CUDA0 is '-4608.00', not a size a boot can log",
        ),
    ],
)  # fmt: skip
def test_an_impossible_figure_is_refused_with_its_line(
    log: Path, after: str, extra: str, message: str
) -> None:
    text, line = _with(log, after, extra)
    with pytest.raises(LogError) as refused:
        parse_log(text)
    assert str(refused.value) == f"line {line}: {message}"


def test_repeated_buffers_beyond_the_card_are_refused(repo: Path, tmp_path: Path) -> None:
    kv = "0.07.490.768 I llama_kv_cache:      CUDA0 KV buffer size =  4608.00 MiB"
    text, line = _with(LLAMA, kv, "\n".join([kv] * 40))
    with pytest.raises(LogError) as refused:
        parse_log(text)
    assert str(refused.value) == (
        f"line {line + 27}: the buffers on CUDA0 sum to 143.7 GiB, more than the 139.8 GiB of its "
        "NVIDIA H200: not one boot's log"
    )
    # Without the cards' lines, the card is the rig's: a 3090 holds 24 GiB.
    bare = "\n".join(x for x in text.splitlines() if "CUDA0 (" not in x and "- CUDA0" not in x)
    (tmp_path / "repeated.log").write_text(bare + "\n")
    run = invoke_in(repo, "fit", "log", str(tmp_path / "repeated.log"), "--profile", GGUF,
                    "--record")  # fmt: skip
    assert run.code == 2, run.text
    assert "error: the log's boot holds 200.8 GiB on one GPU; the cards of the profile's rig " in (
        run.err
    )
    assert "1x3090 have 24.0 GiB: name the rig it ran on with --rig" in run.err


def test_a_log_and_its_numbers_as_text_never_crash(tmp_path: Path, repo: Path) -> None:
    for line in ("GPU KV cache size: 1e999 tokens", "Available KV cache memory: 1.5.5 GiB"):
        (tmp_path / "x.log").write_text(f"INFO vLLM API server version 0.27.1\n{line}\n")
        run = invoke_in(repo, "fit", "log", str(tmp_path / "x.log"), "--profile", MTP)
        assert run.code == 2 and "Traceback" not in run.text
        assert "line 2: " in run.err
