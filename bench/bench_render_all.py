"""`profilegen render --all` after a pull request adds many new profiles: the time each new
profile adds to the run (its compose, bundle files, explain record and catalogue pages), the
shipped profiles already in the cache, as on a maintainer's machine.

    python bench/bench_render_all.py [N]   # N new profiles (default 1,000)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import copy_catalogue, python_command, table

TARGET_MS = 10.0
BASE = "qwen-a3b-preview-single"  # a small profile of the shipped catalogue
COPIED = ("registry", "schema", "compose", "docs", "gateways", "profilegen.lock.json")
MODELINE = "# yaml-language-server: $schema=../../schema/profile.schema.json\n"


def _new_profile(i: int) -> str:
    return (
        f"{MODELINE}id: bench-{i:04d}\nextends: {BASE}\n"
        f'title: "Bench profile {i}, context {8192 + 8 * i}"\n'
        f"port: {20000 + i}\nenvelope:\n  max_model_len: {8192 + 8 * i}\n"
    )


def _render_all(root: Path, cache: Path) -> float:
    env = {**os.environ, "PROFILEGEN_CACHE": str(cache)}
    start = time.perf_counter()
    done = subprocess.run(
        python_command("from profilegen.cli import main; main()")
        + ["--root", str(root), "render", "--all"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"render --all exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return time.perf_counter() - start


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory(prefix="bench-render-all-") as tmp:
        root, cache = Path(tmp) / "repo", Path(tmp) / "cache"
        copy_catalogue(root, COPIED)
        _render_all(root, cache)  # the shipped catalogue, into the cache
        shipped = _render_all(root, cache)
        for i in range(count):
            (root / "registry" / "profiles" / f"bench-{i:04d}.yaml").write_text(_new_profile(i))
        grown = _render_all(root, cache)
    per_new_ms = (grown - shipped) / count * 1000
    print(
        table(
            [
                ("`render --all`, shipped catalogue cached", f"{shipped:.2f} s"),
                (f"`render --all` with {count} new profiles", f"{grown:.2f} s"),
                ("each new profile adds", f"{per_new_ms:.1f} ms (target <= {TARGET_MS:.0f} ms)"),
                ("cores", str(os.cpu_count())),
            ]
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
