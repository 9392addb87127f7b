"""What one sandbox costs: a box started and ended around `true` (its set-up alone), and the
explain batch of the shipped catalogue per container and per launch (CPU of the box's
processes; medians of a few runs). Every explain, render and check pays these."""

from __future__ import annotations

import resource
import statistics
import sys
import time

from _timing import ROOT, table

from profilegen.explain.batch import batch_jobs
from profilegen.explain.sandbox import run_jobs
from profilegen.explain.scenarios import prepare_profiles
from profilegen.generated.tree import render_all
from profilegen.registry import load_registry_cached
from profilegen.sandbox import Box, run

BOXES = 20
RUNS = 3
TARGET_BOX_CPU_MS = 30.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def box_start() -> tuple[float, float]:
    """Wall and CPU seconds of one box around `true`, with a file and no binds."""
    box = Box(files={"/usr/local/bin/stub": b"#!/bin/sh\nexit 0\n"})
    run(box, ["/bin/true"], timeout=20)
    walls, cpus = [], []
    for _ in range(BOXES):
        cpu, start = _children_cpu(), time.perf_counter()
        run(box, ["/bin/true"], timeout=20)
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def catalogue_batch() -> tuple[int, int, float]:
    """Containers, launches and the boxes' CPU seconds of the catalogue's explain batch, run
    in one box (nothing remembered)."""
    registry, _sink = load_registry_cached(ROOT)
    _groups, jobs = batch_jobs(prepare_profiles(registry, render_all(registry, None)))
    cpus = []
    for _ in range(RUNS):
        cpu = _children_cpu()
        run_jobs(jobs, workers=1)
        cpus.append(_children_cpu() - cpu)
    return len(jobs), sum(len(j.launches) for j in jobs), statistics.median(cpus)


def main() -> int:
    wall, cpu = box_start()
    jobs, launches, batch = catalogue_batch()
    print(
        table(
            [
                ("one box around `true`, wall (median)", f"{wall * 1000:.1f} ms"),
                (
                    "one box around `true`, CPU (median)",
                    f"{cpu * 1000:.1f} ms (target <= {TARGET_BOX_CPU_MS:.0f} ms)",
                ),
                ("catalogue explain batch", f"{jobs} containers, {launches} launches"),
                ("  its CPU in one box (median)", f"{batch:.2f} s"),
                ("  per launch", f"{batch / launches * 1000:.1f} ms"),
            ]
        )
    )
    return 0 if cpu * 1000 <= TARGET_BOX_CPU_MS else 1


if __name__ == "__main__":
    sys.exit(main())
