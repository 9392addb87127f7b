"""Instant answers: one render, one check, as processes, warm and cold (medians of runs).

    python bench/bench_cache.py [--upstream DIR]

DIR is a checkout of the upstream catalogue at ee06b714 (its `scripts/generate-compose.sh`);
without it the side-by-side ratio is skipped, and said so. Targets:
- `profilegen render PROFILE`, warm: <= 0.4x the upstream generator for the same profile;
- `profilegen check` on an unchanged tree, warm: <= 0.3 s;
- `profilegen check` cold (`--no-cache`): reported as a multiple of importing the
  dependencies (target <= 3x);
- `check` + `render --all` on the whole catalogue: < 2 s, warm and after one profile changed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _timing import ROOT, median_seconds, python_command, run_command, table

RUNS = 5
PROFILE = "qwen38-27b-dual-fast"
PROFILEGEN = [sys.executable, "-m", "profilegen"]
DEPS = "import pydantic, jinja2, ruamel.yaml, click, jsonschema, huggingface_hub"


def _seconds(argv: list[str], cwd: Path = ROOT, ok: tuple[int, ...] = (0,)) -> float:
    return median_seconds(lambda: run_command(argv, ok, cwd=cwd), RUNS)


def _upstream(path: Path | None) -> tuple[str, str] | None:
    if path is None or not (path / "scripts" / "generate-compose.sh").is_file():
        return None
    argv = ["bash", "scripts/generate-compose.sh", "--profile", "vllm/dual"]
    return ("upstream generate-compose.sh --profile vllm/dual", f"{_seconds(argv, path):.3f} s")


def _one_change(root: Path) -> float:
    """check + render --all after one profile's title changed (a typical pull request)."""
    path = root / "registry" / "profiles" / f"{PROFILE}.yaml"
    original = path.read_text(encoding="utf-8")
    times = []
    for n in range(RUNS):
        path.write_text(original.replace('TP2"', f'TP2 ({n})"'), encoding="utf-8")
        times.append(
            median_seconds(
                lambda: (
                    run_command([*PROFILEGEN, "--root", str(root), "render", "--all"]),
                    run_command([*PROFILEGEN, "--root", str(root), "check", "-q"], (0, 1)),
                ),
                1,
            )
        )
    path.write_text(original, encoding="utf-8")
    return sorted(times)[len(times) // 2]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", type=Path, help="a checkout of the upstream catalogue")
    args = parser.parse_args()
    render = [*PROFILEGEN, "render", PROFILE]
    check = [*PROFILEGEN, "check", "-q"]
    run_command(render)
    run_command(check)  # warm every cache once
    render_warm = _seconds(render)
    check_warm = _seconds(check)
    check_cold = _seconds([*PROFILEGEN, "--no-cache", "check", "-q"])
    deps = _seconds(python_command(DEPS))
    both_warm = _seconds([*PROFILEGEN, "render", "--all"]) + check_warm
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "root"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "*.pyc"))
        one_change = _one_change(copy)
    rows = [
        (f"profilegen render {PROFILE}, warm", f"{render_warm:.3f} s"),
        ("profilegen check (unchanged tree), warm", f"{check_warm:.3f} s (target <= 0.3 s)"),
        ("profilegen --no-cache check, cold", f"{check_cold:.3f} s"),
        ("importing the dependencies", f"{deps:.3f} s"),
        ("cold check / dependency import", f"{check_cold / deps:.1f}x (target <= 3x)"),
        ("render --all + check, warm", f"{both_warm:.3f} s (target < 2 s)"),
        ("render --all + check, one profile changed", f"{one_change:.3f} s (target < 2 s)"),
    ]
    upstream = _upstream(args.upstream)
    ok = check_warm <= 0.3 and both_warm < 2 and one_change < 2
    if upstream is None:
        rows.append(("upstream generator", "skipped: pass --upstream DIR (a checkout)"))
    else:
        rows.append(upstream)
        ratio = render_warm / float(upstream[1].split()[0])
        rows.append(("render, warm / upstream", f"{ratio:.2f}x (target <= 0.4x)"))
        ok = ok and ratio <= 0.4
    print(table(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
