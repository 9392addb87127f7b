"""`profilegen render --all` after a pull request adds many new profiles: the time each new
profile adds to the run (its compose, bundle files, explain record and catalogue pages), the
shipped profiles already in the cache, as on a maintainer's machine. Beside it, the floor: the
new profiles' explain runs alone, on every core (their record cannot be written without them).

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

from profilegen.explain.batch import batch_jobs
from profilegen.explain.sandbox import run_jobs
from profilegen.explain.scenarios import prepare_profiles
from profilegen.generated.tree import render_all
from profilegen.registry import load_registry

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


def explain_floor(root: Path, count: int) -> tuple[int, float]:
    """The new profiles' launches, and the wall seconds of running them all over the boxes
    a render uses."""
    registry, _sink = load_registry(root)
    new = frozenset(f"bench-{i:04d}" for i in range(count))
    _groups, jobs = batch_jobs(prepare_profiles(registry, render_all(registry, new)))
    start = time.perf_counter()
    run_jobs(jobs)
    return sum(len(job.launches) for job in jobs), time.perf_counter() - start


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
        launches, floor = explain_floor(root, count)
    per_new_ms = (grown - shipped) / count * 1000
    print(
        table(
            [
                ("`render --all`, shipped catalogue cached", f"{shipped:.2f} s"),
                (f"`render --all` with {count} new profiles", f"{grown:.2f} s"),
                ("each new profile adds", f"{per_new_ms:.1f} ms (target <= {TARGET_MS:.0f} ms)"),
                (
                    f"their {launches} explain runs alone, on every core",
                    f"{floor:.2f} s: {floor / count * 1000:.1f} ms a profile",
                ),
                ("cores", str(os.cpu_count())),
            ]
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
