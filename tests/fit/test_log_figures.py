"""A boot log's counts are held to what a boot can print: a figure of hundreds or thousands of
digits (n_ctx, a card's MiB, a vLLM arg) is refused with its line, never a ValueError or an
OverflowError (exit 3) in the formulas it reaches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profilegen.fit.logs import LogError, parse_log
from tests.support.cli import invoke_in

from .conftest import GGUF, MTP
from .test_fromlog import LLAMA, SGLANG, VLLM

HUGE = "9" * 5000  # past Python's 4,300-digit limit on int()
LONG = "9" * 400  # past any float


def _sub(path: Path, pattern: str, new: str) -> str:
    text, count = re.subn(pattern, new, path.read_text(), count=1)
    assert count == 1, pattern
    return text


@pytest.mark.parametrize(
    ("log", "pattern", "new", "message"),
    [
        (LLAMA, r"n_ctx\s+= \d+", f"n_ctx = {HUGE}", "n_ctx is 5,000 digits long"),
        (LLAMA, r"n_ctx\s+= \d+", f"n_ctx = {LONG}", "n_ctx is 400 digits long"),
        (LLAMA, r"n_seq_max\s+= \d+", f"n_seq_max = {HUGE}", "n_seq_max is 5,000 digits long"),
        (LLAMA, r"n_ubatch\s+= \d+", f"n_ubatch = {LONG}", "n_ubatch is 400 digits long"),
        (LLAMA, r"- CUDA0   : NVIDIA H200 \(\d+", f"- CUDA0 : NVIDIA H200 ({HUGE}",
         "the memory of CUDA0 is 5,000 digits long"),
        (SGLANG, r"context_len=\d+", f"context_len={HUGE}", "context_len is 5,000 digits long"),
        (VLLM, r"'max_model_len': 262144", f"'max_model_len': {LONG}",
         "the non-default arg 'max_model_len' holds a number past 15 digits or not finite"),
        (VLLM, r"'gpu_memory_utilization': 0.9", "'gpu_memory_utilization': 1e999",
         "the non-default arg 'gpu_memory_utilization' holds a number past 15 digits or not "
         "finite"),
    ],
)  # fmt: skip
def test_a_figure_no_boot_prints_is_refused_with_its_line(
    log: Path, pattern: str, new: str, message: str
) -> None:
    text = _sub(log, pattern, new)
    line = next(n for n, x in enumerate(text.splitlines(), 1) if new in x)
    with pytest.raises(LogError) as refused:
        parse_log(text)
    assert str(refused.value).startswith(f"line {line}: {message}")


@pytest.mark.parametrize(
    ("log", "profile", "pattern", "new"),
    [
        (LLAMA, GGUF, r"n_ctx\s+= \d+", f"n_ctx = {LONG}"),
        (VLLM, MTP, r"'max_model_len': 262144", f"'max_model_len': {LONG}"),
    ],
)
def test_fit_log_says_so_and_writes_nothing(
    repo: Path, tmp_path: Path, log: Path, profile: str, pattern: str, new: str
) -> None:
    path = tmp_path / "boot.log"
    path.write_text(_sub(log, pattern, new))
    before = (repo / "registry/profiles" / f"{profile}.yaml").read_text()
    run = invoke_in(repo, "fit", "log", str(path), "--profile", profile, "--record")
    assert run.code == 2, run.text
    assert run.err.startswith(f"error: {path}: line ")
    assert "not a figure a boot can log" in run.err or "not one a boot takes" in run.err
    assert (repo / "registry/profiles" / f"{profile}.yaml").read_text() == before
