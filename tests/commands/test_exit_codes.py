"""The exit-code contract: 0 ok, 1 findings, 2 usage or unreachable service, 3 a bug."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import invoke_in

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("render",), "error: name a PROFILE to render (or use --all)"),
        (("render", "--all", "qwen38-27b-dual-fast"), "error: --all renders every profile"),
        (("fit",), "error: name a PROFILE to fit (or use --calibration or --from-log FILE)"),
        (("show", "no-such-profile"), "error: no profile 'no-such-profile'"),
        (("render", "--no-such-option"), "Error: No such option '--no-such-option'"),
    ],
)
def test_usage_mistakes_exit_2_in_every_command(args: tuple[str, ...], message: str) -> None:
    run = invoke_in(ROOT, *args)
    assert run.code == 2, run.text
    assert message in run.err


def test_a_closed_pipe_ends_the_output_quietly_with_exit_0() -> None:
    # The reader is gone before the first byte is written: every write fails with EPIPE.
    proc = subprocess.Popen(
        [sys.executable, "-m", "profilegen", "--root", str(ROOT), "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0, err
    assert err == b""
