"""Render time per profile (median of runs), in-process and as a whole CLI call."""

from __future__ import annotations

import sys

from _timing import ROOT, median_seconds, python_command, run_command, table

from profilegen.registry import open_registry
from profilegen.render import render_profile

UPSTREAM_SECONDS_PER_PROFILE = 0.42  # the upstream generator, measured on this machine
RUNS = 5


def main() -> int:
    registry = open_registry(ROOT)
    profiles = list(registry.concrete_profiles())

    def render_all() -> None:
        for profile in profiles:
            render_profile(registry, profile)

    render_all()  # warm the template cache, as a long-running process would
    per_profile = median_seconds(render_all, RUNS) / len(profiles)
    cli = median_seconds(
        lambda: run_command(
            python_command("from profilegen.cli import main; main()")
            + ["render", "qwen38-27b-dual-dflash15-fast"]
        ),
        RUNS,
    )
    rows = [
        ("profiles rendered", f"{len(profiles)} of {len(profiles)}"),
        ("in-process, per profile (median)", f"{per_profile * 1000:.1f} ms"),
        ("`profilegen render <seed>` (median)", f"{cli:.3f} s"),
        (
            "upstream generator, per profile",
            f"{UPSTREAM_SECONDS_PER_PROFILE:.2f} s (8 of 101 profiles)",
        ),
        ("speed-up per profile", f"{UPSTREAM_SECONDS_PER_PROFILE / per_profile:.0f}x"),
    ]
    print(table(rows))
    return 0 if per_profile < UPSTREAM_SECONDS_PER_PROFILE else 1


if __name__ == "__main__":
    sys.exit(main())
