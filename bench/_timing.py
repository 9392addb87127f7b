"""Shared helpers for the benchmarks: medians of repeated runs, a small table."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_catalogue(dest: Path, names: Sequence[str]) -> None:
    """This repository's folders and files of these names, copied into dest."""
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name)
        elif source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_command(argv: Sequence[str], ok: tuple[int, ...] = (0,), cwd: Path = ROOT) -> None:
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}")


def python_command(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def table(rows: Sequence[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)
