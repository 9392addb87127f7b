"""Work the test processes of one session share: done once, by whichever process asks first,
while the others wait on a file lock; they all read its result (JSON) from the session's shared
folder. A result that could not be made is not kept: the next process to ask tries again."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The folder every test process of this session shares (xdist workers inherit it).
SHARED = "PROFILEGEN_TEST_SHARED"


def shared_folder() -> Path:
    return Path(os.environ[SHARED])


def once(name: str, make: Callable[[Path], Any]) -> Any:
    """`make(folder)`'s result, made once per session; `folder` is its own (empty when `make`
    starts), kept for the session: files written there may be named in the result."""
    top = shared_folder()
    folder, result = top / name, top / f"{name}.json"
    with (top / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
            folder.mkdir()
            made = json.dumps(make(folder))
            partial = top / f"{name}.partial"
            partial.write_text(made, encoding="utf-8")
            partial.replace(result)
    return json.loads(result.read_text(encoding="utf-8"))
