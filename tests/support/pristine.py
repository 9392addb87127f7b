"""The session's pristine repository: this repository's data with schemas, lock and generated
tree made fresh, built once per test session in a process of its own.

It holds the families the workflow tests name (the qwen3.8 family with its siblings, the
qwen3.6 27B, Gemma 4 31B and 12B and Deckard profiles, and every base they extend): a scratch
`check` of the whole catalogue costs twice as much and proves nothing more, since the suite
checks every profile of the catalogue itself elsewhere (tests/render, tests/explain) and CI runs
`profilegen check` on the repository.

The process that configures the session starts the build; it runs while test processes start
and while tests that do not need it run. A test that needs it waits for the `done` marker.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DONE, FAILED, LOG = "pristine.done", "pristine.failed", "pristine.log"
WAIT_S = 600.0
# The profiles kept, by id; each keeps the profiles it extends or names as siblings.
KEEP = re.compile(
    r"(qwen38-|qwen3\.8-|qwen36-27b-dual|qwen-27b-|deckard40b-)"
    r"|(gemma-31b-dual|gemma-12b-single-q8kxl|llamacpp-gemma-12b-single-q8kxl)$"
)


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
    prune(root)
    for args in (("schema",), ("lock", "--offline"), ("render", "--all")):
        run = invoke_in(root, *args)
        if run.code != 0:
            (shared / FAILED).write_text(f"profilegen {' '.join(args)}: {run.text}")
            return
    (shared / DONE).touch()


def prune(root: Path) -> None:
    """Removes the profiles KEEP does not name (nor a kept profile extends or names as a
    sibling) and their output."""
    from ruamel.yaml import YAML

    folder = root / "registry" / "profiles"
    docs = {path.stem: YAML(typ="safe").load(path.read_bytes()) for path in folder.glob("*.yaml")}
    kept = {name for name in docs if KEEP.match(name)}
    todo = list(kept)
    while todo:
        doc = docs[todo.pop()]
        for other in [doc.get("extends"), *doc.get("siblings", [])]:
            if other in docs and other not in kept:
                kept.add(other)
                todo.append(other)
    for name in docs.keys() - kept:
        (folder / f"{name}.yaml").unlink()
        shutil.rmtree(root / "compose" / name, ignore_errors=True)


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
