"""The maintainer's loop: `profilegen check` right after a one-line edit of one profile, in a
process of its own, on a copy of the shipped repository (the cache holds the run before the
edit). The median of a few edits, beside a warm check with no edit, relative to importing our
dependencies; no target of its own yet: it shows where an edit's check spends its time."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _timing import copy_catalogue, median_seconds, python_command, run_command, table

RUNS = 7
DATA = ("registry", "schema", "compose", "gateways", "k8s", "templates", "docs")
DATA += ("profilegen.lock.json",)
EDITED = Path("registry/profiles/agents-a1-dual.yaml")
IMPORT_DEPS = "import jinja2, pydantic, ruamel.yaml, jsonschema, click, huggingface_hub"


def _check(root: Path) -> None:
    argv = python_command("from profilegen.cli import main; main()")
    run_command([*argv, "--root", str(root), "check"], ok=(0, 1))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-edit-") as tmp:
        root, cache = Path(tmp) / "root", Path(tmp) / "cache"
        copy_catalogue(root, DATA)
        os.environ["PROFILEGEN_CACHE"] = str(cache)
        _check(root)  # the run before the first edit
        edits, warm, imports = [], [], []
        for i in range(RUNS):
            with (root / EDITED).open("a", encoding="utf-8") as f:
                f.write(f"# edit {i}\n")
            start = time.perf_counter()
            _check(root)
            edits.append(time.perf_counter() - start)
            warm.append(median_seconds(lambda: _check(root), 1))
            imports.append(median_seconds(lambda: run_command(python_command(IMPORT_DEPS)), 1))
    edit, still, deps = (statistics.median(x) for x in (edits, warm, imports))
    print(
        table(
            [
                ("import our dependencies (median)", f"{deps:.3f} s"),
                ("`profilegen check`, nothing changed (median)", f"{still:.3f} s"),
                ("`profilegen check` after a one-line edit (median)", f"{edit:.3f} s"),
                ("edit / import ratio", f"{edit / deps:.1f}x"),
            ]
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
