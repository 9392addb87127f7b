"""`profilegen fit`: a profile's per-GPU memory budget and KV pool, with what-if overrides."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import click

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..fit.calibrate import TOLERANCE, calibration_points
from ..fit.predict import FitOptions, fit_profile, read_lock_or_none
from ..fit.report import format_calibration, format_text
from ..registry import Registry, find_profile
from .common import FORMAT_TEXT_JSON, Context, pass_context


@click.command("fit")
@click.argument("profile", required=False)
@click.option("--rig", help="Fit on this rig instead (its GPU and card count).")
@click.option("--tp", type=click.IntRange(min=1), help="Tensor-parallel size.")
@click.option(
    "--gpu-util", type=click.FloatRange(0, 1, min_open=True), help="gpu_memory_utilization."
)
@click.option("--kv-dtype", help="KV-cache dtype (bfloat16, fp8_e4m3; llama.cpp: q8_0, q4_0).")
@click.option("--max-model-len", type=click.IntRange(min=1), help="Context length in tokens.")
@click.option("--max-num-seqs", type=click.IntRange(min=1), help="Concurrent sequences.")
@click.option(
    "--max-num-batched-tokens", type=click.IntRange(min=1), help="Prefill chunk in tokens."
)
@click.option("--spec-n", type=click.IntRange(min=0), help="Draft width; 0 turns the drafter off.")
@click.option(
    "--kv-cache-memory",
    type=click.IntRange(min=1),
    metavar="BYTES",
    help="Pin vLLM's KV pool per GPU (replaces the utilization budget).",
)
@click.option("--weights", help="Another weights variant of the profile's model.")
@click.option(
    "--calibration",
    is_flag=True,
    help="Ignore PROFILE: predicted vs measured for every evidence record (exit 1 past ±5%).",
)
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def command(
    obj: Context, /, profile: str | None, fmt: str, calibration: bool, **what_if: Any
) -> int:
    """Predict PROFILE's per-GPU memory budget and KV pool (exit 1 when it does not fit)."""
    opts = FitOptions(profile=profile, fmt=fmt, calibration=calibration, **what_if)
    return run_fit(obj.registry(), opts)


def run_fit(registry: Registry, opts: FitOptions) -> int:
    """0 fits (or calibration holds), 1 does not fit (or a point drifted); usage errors raise."""
    lock = read_lock_or_none(registry)
    if opts.calibration:
        if opts.what_ifs():
            raise UsageError("--calibration takes no what-if options")
        points = calibration_points(registry, lock)
        if opts.fmt == "json":
            rows = [{**asdict(p), "within": p.within} for p in points]
            click.echo(json.dumps({"tolerance": TOLERANCE, "points": rows}, indent=2))
        else:
            click.echo(format_calibration(points))
        drifted = any(p.counted and not p.within for p in points)
        return EXIT_FINDINGS if drifted else EXIT_OK
    if not opts.profile:
        raise UsageError("name a PROFILE to fit (or use --calibration)")
    result = fit_profile(registry, find_profile(registry, opts.profile), opts, lock=lock)
    text = json.dumps(result.as_json(), indent=2) if opts.fmt == "json" else format_text(result)
    click.echo(text)
    return EXIT_OK if result.fits else EXIT_FINDINGS
