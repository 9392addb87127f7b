"""A real-engine tier's host process: one per test session, started by whoever asks first.

The process boots the tier's engines (its `serve`), records where each listens in
`<shared>/<folder>/state.json` (or the reason it failed in `failed.txt`), and ends with the
session, or on its own once the session's process is gone (a killed run leaves no engines
behind). `realengines` (llama-server) and `realvllm` (vLLM) are such tiers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from tests.support.ready import ended

REPO = Path(__file__).resolve().parents[2]
STATE, FAILED, LOG, PID = "state.json", "failed.txt", "host.log", "host.pid"
SESSION_PID = "session.pid"  # in the shared folder: the process that made it


def host(shared: Path, folder: str, bring_up: Any) -> None:
    """A tier's host process: `bring_up(here, stop)` boots its engines and returns the state
    the tests read; it is recorded, then the process waits for the session to end."""
    here = shared / folder
    stop: list[Any] = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        state = bring_up(here, stop)
        partial = here / f"{STATE}.partial"
        partial.write_text(json.dumps(state, indent=1))
        partial.replace(here / STATE)
        while _session_lives(shared):
            time.sleep(2)
    except BaseException as exc:
        if not isinstance(exc, SystemExit):
            (here / FAILED).write_text(traceback.format_exc())
        raise
    finally:
        for item in reversed(stop):
            with contextlib.suppress(Exception):
                item.stop() if hasattr(item, "stop") else _end(item)


def _session_lives(shared: Path) -> bool:
    """Whether the test session that started this process is still there: its shared folder
    and the process that made it (a killed session leaves no engines behind)."""
    if not shared.is_dir():
        return False
    try:
        os.kill(int((shared / SESSION_PID).read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def _end(proc: Any) -> None:
    """Ends the proxy at once: the session is over and nothing of the proxy is kept."""
    proc.kill()
    proc.wait(timeout=10)


# ----------------------------------------------------------------- starting and waiting


def start(shared: Path, folder: str, module: str) -> None:
    """Starts the host process (`module.serve`) once per session (whoever asks first);
    returns at once."""
    import fcntl

    here = shared / folder
    here.mkdir(exist_ok=True)
    with (here / "start.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (here / PID).exists():
            return
        code = f"import sys; from pathlib import Path; from {module} import serve; "
        code += "serve(Path(sys.argv[1]))"
        with (here / LOG).open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-c", code, str(shared)],
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        (here / PID).write_text(str(proc.pid))


def stop(shared: Path, folder: str) -> None:
    """Ends the host process and everything it started (the session's end)."""
    pid_file = shared / folder / PID
    if not pid_file.is_file():
        return
    pid = int(pid_file.read_text())
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if _gone(pid):
                return
            time.sleep(0.05)
        os.killpg(pid, signal.SIGKILL)
        _gone(pid)


def _gone(pid: int) -> bool:
    """Whether the process has ended: reaped here when it is this process's child (a child
    that has ended stays a zombie, which signal 0 still reaches, until its parent waits)."""
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    return ended(pid)


def wait(shared: Path, timeout: float, folder: str, module: str) -> dict[str, Any]:
    """The state once every engine and the proxy answer; a failure is raised with its reason."""
    start(shared, folder, module)
    here = shared / folder
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (here / STATE).is_file():
            state: dict[str, Any] = json.loads((here / STATE).read_text())
            return state
        if (here / FAILED).is_file():
            raise AssertionError(f"the real engines did not start:\n{(here / FAILED).read_text()}")
        time.sleep(0.2)
    log = (here / LOG).read_text(errors="replace")[-3000:]
    raise AssertionError(f"the real engines were not up within {timeout:.0f} s:\n{log}")
