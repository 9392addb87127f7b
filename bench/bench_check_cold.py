"""`profilegen check` of the shipped registry from an empty cache: every profile rendered,
every explain scenario run in the sandbox, every rule; the median of a few runs, wall and CPU
(the child processes' included, as the boxes are children).

Beside it, the floor: the same explain runs alone, on every core, with nothing else in the
process running (the registry read and the profiles rendered beforehand). A cold check runs
them all, and cannot start them before the registry is read, so it cannot take less."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from _timing import ROOT, python_command, table

from profilegen.explain.batch import batch_jobs
from profilegen.explain.sandbox import run_jobs
from profilegen.explain.scenarios import prepare_profiles
from profilegen.generated.tree import render_all
from profilegen.registry import load_registry_cached

TARGET_S = 1.5
RUNS = 3


def _one() -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as cache:
        env = {**os.environ, "PROFILEGEN_CACHE": cache}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            python_command("from profilegen.cli import main; main()") + ["check"],
            env=env,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def explain_floor() -> tuple[int, float, float]:
    """Launches, and the median wall and CPU seconds of running them all, shared over the
    boxes a check uses (nothing remembered: the runs are not stored here)."""
    registry, _sink = load_registry_cached(ROOT)
    _groups, jobs = batch_jobs(prepare_profiles(registry, render_all(registry, None)))
    runs = []
    for _ in range(RUNS):
        cpu, start = _children_cpu(), time.perf_counter()
        run_jobs(jobs)
        runs.append((time.perf_counter() - start, _children_cpu() - cpu))
    launches = sum(len(job.launches) for job in jobs)
    return launches, statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> int:
    runs = [_one() for _ in range(RUNS)]
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    launches, floor_wall, floor_cpu = explain_floor()
    cores = os.cpu_count() or 1
    print(
        table(
            [
                (
                    "cold `profilegen check`, wall (median)",
                    f"{wall:.2f} s (target <= {TARGET_S} s)",
                ),
                ("cold `profilegen check`, CPU with children (median)", f"{cpu:.2f} s"),
                (f"its {launches} explain runs alone, wall (median)", f"{floor_wall:.2f} s"),
                ("  their CPU (median)", f"{floor_cpu:.2f} s"),
                ("  per launch", f"{floor_cpu / launches * 1000:.1f} ms"),
                ("CPU the target leaves (target x cores)", f"{TARGET_S * cores:.2f} s"),
                ("cores", str(cores)),
            ]
        )
    )
    return 0 if wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
