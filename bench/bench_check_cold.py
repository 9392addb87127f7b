"""`profilegen check` of the shipped registry from an empty cache: every profile rendered,
every explain scenario run in the sandbox, every rule; the median of a few runs, wall and CPU
(the child processes' included, as the boxes are children)."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from _timing import python_command, table

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


def main() -> int:
    runs = [_one() for _ in range(RUNS)]
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    print(
        table(
            [
                (
                    "cold `profilegen check`, wall (median)",
                    f"{wall:.2f} s (target <= {TARGET_S} s)",
                ),
                ("cold `profilegen check`, CPU with children (median)", f"{cpu:.2f} s"),
                ("cores", str(os.cpu_count())),
            ]
        )
    )
    return 0 if wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
