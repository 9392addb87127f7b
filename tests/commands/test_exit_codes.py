"""The exit-code contract: 0 ok, 1 findings, 2 usage or unreachable service, 3 a bug."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from profilegen.cli import cli
from profilegen.commands.cli_doc import walk
from tests.support.cli import invoke_in

ROOT = Path(__file__).resolve().parents[2]
P = "qwen38-27b-dual-fast"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
ROUTES = [sub.command_path.split()[1:] for sub, _c in walk(cli, click.Context(cli, info_name="pg"))]
# Each command with a value it refuses, and the exact words of the refusal (exit 2).
BAD_VALUES = {
    "artifacts": (["--format", "xml"], "Invalid value for '--format': 'xml' is not one of"),
    "bench": (["http://127.0.0.1:9", "--prefill", "abc"], "error: --prefill takes token counts"),
    "cache add": (["/"], "Invalid value for 'FILES...': File '/' is a directory."),
    "changelog": (["nope"], "error: no profile 'nope'"),
    "check": (["--timeout", "0"], "error: --timeout must be a number of seconds more than 0"),
    "diff": ([P, "nope"], "error: no profile 'nope'"),
    "engine facts": (["nope"], "error: no engine 'nope'"),
    "engines": (["--format", "yaml"], "Invalid value for '--format': 'yaml' is not one of"),
    "explain": ([P, "-e", "NOEQ"], "error: -e NOEQ: expected VAR=VALUE"),
    "fetch": ([P, "--model-dir", "/", "--timeout", "-1"], "error: --timeout must be a number"),
    "fit": ([P, "--set", "envelope.tp=0"], "error: --set envelope.tp=0: input should be greater"),
    "fit calibration": (["--leave-one-out", "x"], "Got unexpected extra argument (x)"),
    "fit log": (["/nonexistent.log"], "error: /nonexistent.log: cannot read the log (No such"),
    "gateway": ([P, "--engine-host", "a b"], "error: --engine-host 'a b' is not a host name"),
    "gpus": (["--format", "github"], "Invalid value for '--format': 'github' is not one of"),
    "import club3090": (["/nonexistent"], "error: /nonexistent: no such folder"),
    "list": (["--status", "nope"], "Invalid value for '--status': 'nope' is not one of"),
    "init": (["--rig", "3x9999"], "error: --rig '3x9999': no GPU '9999' (GPUs: 3090, 3090ti,"),
    "lock": (["--timeout", "abc"], "error: --timeout must be a number of seconds"),
    "model add": (
        ["lab/x", "--from-dir", str(ROOT / "schema"), "--revision", COMMIT],
        f"error: {ROOT / 'schema'} has no config.json (and no GGUF file): it is not a checkpoint",
    ),
    "new": (["x", "--from", "nope"], "error: no profile 'nope' to start from"),
    "rehearse": (["nope"], "error: no profile 'nope'"),
    "render": ([P, "--target", "nope"], "Invalid value for '--target': 'nope' is not one of"),
    "rigs": (["--format", "text", "--format", "csv"], "Invalid value for '--format': 'csv'"),
    "schema": (["--format", "yaml"], "Invalid value for '--format': 'yaml' is not one of"),
    "show": (["nope"], "error: no profile 'nope'"),
    "upgrade": (["nope", "--to", "1.0"], "error: no engine 'nope'"),
    "verify": (["nope", "--model-dir", "/"], "error: no profile 'nope'"),
}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("render",), "error: name a PROFILE to render (or use --all)"),
        (("render", "--all", "qwen38-27b-dual-fast"), "error: --all renders every profile"),
        (("fit",), "error: name a PROFILE to fit (or use `fit calibration` or `fit log FILE`)"),
        (("show", "no-such-profile"), "error: no profile 'no-such-profile'"),
        (("render", "--no-such-option"), "Error: No such option '--no-such-option'"),
    ],
)
def test_usage_mistakes_exit_2_in_every_command(args: tuple[str, ...], message: str) -> None:
    run = invoke_in(ROOT, *args)
    assert run.code == 2, run.text
    assert message in run.err


def _no_traceback_exit_2(args: list[str], message: str) -> None:
    run = invoke_in(ROOT, *args)
    assert run.code == 2, run.text
    assert message in run.err, run.err
    assert "Traceback" not in run.text and run.out == ""


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_every_command_refuses_an_unknown_option(route: list[str]) -> None:
    _no_traceback_exit_2([*route, "--no-such-option"], "No such option '--no-such-option'")


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_every_command_names_a_missing_argument(route: list[str]) -> None:
    command = cli
    for word in route:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), word)
        assert found is not None
        command = found
    required = [p for p in command.params if p.required]
    if not required:
        assert invoke_in(ROOT, *route, "--help").code == 0  # nothing to leave out
        return
    kind = "argument" if isinstance(required[0], click.Argument) else "option"
    _no_traceback_exit_2(route, f"Error: Missing {kind} '")


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_every_command_refuses_a_bad_value_clearly(route: list[str]) -> None:
    args, message = BAD_VALUES[" ".join(route)]
    _no_traceback_exit_2([*route, *args], message)


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
