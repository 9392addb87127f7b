"""The session's pristine repository: this repository's data with schemas, lock and generated
tree made fresh, built once per test session in a process of its own.

The process that configures the session starts the build; it runs while test processes start
and while tests that do not need it run. A test that needs it waits for the `done` marker.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DONE, FAILED, LOG = "pristine.done", "pristine.failed", "pristine.log"
WAIT_S = 600.0


def start(shared: Path) -> subprocess.Popen[bytes]:
    """Starts building shared/pristine in the background."""
    log = (shared / LOG).open("wb")
    code = "import sys; from pathlib import Path; from tests.support.pristine import build; "
    code += "build(Path(sys.argv[1]))"
    return subprocess.Popen(
        [sys.executable, "-c", code, str(shared)],
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


def build(shared: Path) -> None:
    """Runs in the build process: writes DONE, or FAILED with what went wrong."""
    from tests.support.cli import invoke_in
    from tests.support.repo import copy_repo

    root = copy_repo(shared / "pristine")
    for args in (("schema",), ("lock", "--offline"), ("render", "--all")):
        run = invoke_in(root, *args)
        if run.code != 0:
            (shared / FAILED).write_text(f"profilegen {' '.join(args)}: {run.text}")
            return
    (shared / DONE).touch()


def wait(shared: Path) -> Path:
    """shared/pristine once it is built; fails the test with the builder's words if not."""
    deadline = time.monotonic() + WAIT_S
    while not (shared / DONE).exists():
        failed = shared / FAILED
        if failed.exists():
            raise AssertionError(f"the pristine registry did not build:\n{failed.read_text()}")
        if time.monotonic() > deadline or not (shared / LOG).exists():
            log = shared / LOG
            said = log.read_text(errors="replace")[-3000:] if log.exists() else "(never started)"
            raise AssertionError(f"the pristine registry is not there:\n{said}")
        time.sleep(0.05)
    return shared / "pristine"
