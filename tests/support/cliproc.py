"""`python -m profilegen ARGS` as a process of its own, forked from a server process that has
already imported profilegen (one per test process, started on first use).

The child is a separate process running the CLI's own entry point, bounded in time and memory
like any process; only the interpreter start and profilegen's imports (about 0.4 s of CPU a run)
are done once. It starts with nothing computed: the server only imports modules, and profilegen
reads its environment when it runs, not when it is imported. `python -m profilegen` itself is
tested with a real interpreter start (tests/commands).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.support.cli import Run

# What a check or render imports, and this module (the children's entry point).
PRELOAD = [
    "profilegen.cli",
    "profilegen.commands.check",
    "profilegen.commands.render",
    "profilegen.check.driver",
    "profilegen.check.rules",
    "profilegen.registry.loader",
    "profilegen.render",
    "tests.support.cliproc",
]


@functools.cache
def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def run_cli_process(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
    memory: int | None = None,
) -> Run:
    """The CLI run with these arguments in a child process (this process's environment unless
    `env`; its address space limited to `memory` bytes); fails the test past `timeout` s."""
    with tempfile.TemporaryDirectory(prefix="pg-cli-") as tmp:
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        child = start_cli_process(args, out, err, env=env, memory=memory)
        child.join(timeout)
        if child.is_alive():
            child.kill()
            child.join()
            raise AssertionError(f"profilegen {' '.join(args)} ran past {timeout} s")
        return Run(child.exitcode, out.read_text(errors="replace"), err.read_text(errors="replace"))


def start_cli_process(
    args: Sequence[str],
    out: Path | None,
    err: Path,
    *,
    env: Mapping[str, str] | None = None,
    memory: int | None = None,
    cwd: Path | None = None,
) -> Any:
    """The CLI started in a child process writing to `out` and `err` (a started
    multiprocessing Process: join, signal or kill it); `out` None: started without standard
    output, as `profilegen ... >&-` is."""
    child = _context().Process(
        target=_child,
        args=(
            list(args),
            dict(os.environ if env is None else env),
            None if out is None else str(out),
            str(err),
        ),
        kwargs={"memory": memory, "cwd": str(cwd or Path.cwd())},
    )
    child.start()
    return child


def _child(
    args: list[str],
    env: dict[str, str],
    out: str | None,
    err: str,
    *,
    memory: int | None,
    cwd: str,
) -> None:
    """Runs in the child: the environment, limits and output files of a fresh process, then
    the CLI's entry point (its exit status is the process's)."""
    if memory is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # Ctrl-C as a command started from a terminal takes it, even where the suite itself was
    # started with SIGINT ignored (a background job of a shell).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for fd, path in ((1, out), (2, err)):
        if path is None:  # what an interpreter started without the descriptor has
            os.close(fd)
            sys.stdout = None  # type: ignore[assignment]
            continue
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.argv = ["profilegen", *args]
    from profilegen.cli import main

    main()
