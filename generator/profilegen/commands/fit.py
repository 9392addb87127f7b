"""`profilegen fit`: a profile's per-GPU memory budget and KV pool, with what-if overrides.

`--calibration` judges the model on every measured boot in the registry, `--leave-one-out`
refits its constants without each record, and `--from-log` reads a boot log back.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ..authoring.evidence import record_evidence
from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..fit.calibrate import (
    TOLERANCE,
    TOLERANCE_ROUNDED,
    CalibrationPoint,
    calibration_points,
    constant_checks,
    leave_one_out,
    profile_points,
)
from ..fit.fromlog import LogFit, evidence_record, fit_log
from ..fit.logs import MAX_LOG_BYTES, LogError, parse_log
from ..fit.predict import FitOptions, fit_profile, read_lock_or_none
from ..fit.report import (
    format_calibration,
    format_constants,
    format_evidence,
    format_log_fit,
    format_text,
)
from ..registry import Registry, find_profile
from ..registry.files import NotRegular, file_kind, read_regular
from .common import FORMAT_TEXT_JSON, Context, pass_context


@click.command("fit")
@click.argument("profile", required=False)
@click.option("--rig", help="Fit on this rig: a registry rig, or cards like 2x5090, 3090ti+3090.")
@click.option("--engine", help="Fit on this registry engine (another release of the same engine).")
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
    help="Ignore PROFILE: predicted vs measured for every evidence record (exit 1 when one is off).",
)
@click.option(
    "--leave-one-out",
    is_flag=True,
    help="With --calibration: refit the constants without each fitted record and predict it.",
)
@click.option(
    "--from-log",
    "from_log",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read a vLLM, llama.cpp or SGLang boot log: predicted vs measured, term by term.",
)
@click.option("--profile", "log_profile", help="With --from-log: the profile the log belongs to.")
@click.option(
    "--record", is_flag=True, help="With --from-log: add the boot to the profile's evidence."
)
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def command(
    obj: Context,
    /,
    profile: str | None,
    log_profile: str | None,
    from_log: Path | None,
    fmt: str,
    calibration: bool,
    leave_one_out: bool,
    record: bool,
    **what_if: Any,
) -> int:
    """Predict PROFILE's per-GPU memory budget and KV pool (exit 1 when it does not fit)."""
    if from_log is not None:
        if profile and log_profile and profile != log_profile:
            raise UsageError("name the profile once: PROFILE or --profile")
        opts = FitOptions(
            profile=log_profile or profile, fmt=fmt, record=record,
            from_log=str(from_log), **what_if,
        )  # fmt: skip
        return run_fit_log(obj.registry(), from_log, opts)
    if record or log_profile:
        raise UsageError("--record and --profile go with --from-log FILE")
    opts = FitOptions(
        profile=profile, fmt=fmt, calibration=calibration, leave_one_out=leave_one_out, **what_if
    )
    return run_fit(obj.registry(), opts)


def _points_json(points: list[CalibrationPoint]) -> list[dict[str, Any]]:
    return [{**asdict(p), "within": p.within, "status": p.status} for p in points]


def run_calibration(registry: Registry, opts: FitOptions) -> int:
    """0 when every prediction is within tolerance and no constant is stale, else 1."""
    if opts.what_ifs():
        raise UsageError("--calibration takes no what-if options")
    lock = read_lock_or_none(registry)
    points = (
        leave_one_out(registry, lock) if opts.leave_one_out else calibration_points(registry, lock)
    )
    checks = [] if opts.leave_one_out else constant_checks(registry, lock)
    if opts.fmt == "json":
        doc = {
            "tolerance": TOLERANCE,
            "tolerance_rounded": TOLERANCE_ROUNDED,
            "mode": "leave-one-out" if opts.leave_one_out else "calibration",
            "points": _points_json(points),
            "constants": [{**asdict(c), "stale": c.stale} for c in checks],
        }
        click.echo(json.dumps(doc, indent=2))
    else:
        title = "leave-one-out" if opts.leave_one_out else "calibration"
        click.echo(format_calibration(points, title))
        if checks:
            click.echo("\n" + format_constants(checks))
    off = any(p.status == "off" for p in points)
    stale = any(c.stale for c in checks)
    return EXIT_FINDINGS if off or stale else EXIT_OK


def run_fit(registry: Registry, opts: FitOptions) -> int:
    """0 fits (or calibration holds), 1 does not fit (or a point is off); usage errors raise."""
    if opts.calibration:
        return run_calibration(registry, opts)
    if opts.leave_one_out:
        raise UsageError("--leave-one-out goes with --calibration")
    if not opts.profile:
        raise UsageError("name a PROFILE to fit (or use --calibration or --from-log FILE)")
    lock = read_lock_or_none(registry)
    profile = find_profile(registry, opts.profile)
    result = fit_profile(registry, profile, opts, lock=lock)
    # How the fit did on this profile's own recorded boots, so an answer is read with them.
    points, failed = profile_points(registry, profile.id, lock)
    unpredicted = [(rec.name, why) for rec, why in failed]
    if opts.fmt == "json":
        doc = {
            **result.as_json(),
            "evidence": _points_json(points),
            "evidence_unpredicted": [{"key": k, "error": why} for k, why in unpredicted],
        }
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo("\n".join([format_text(result), *format_evidence(points, unpredicted)]))
    return EXIT_OK if result.fits else EXIT_FINDINGS


def _read_log(path: Path) -> str:
    """The log's text: a regular file of bounded size (a FIFO or a device is refused)."""
    try:
        data, _size = read_regular(path, MAX_LOG_BYTES)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the log ({exc.strerror or exc})") from None
    except NotRegular as exc:
        raise UsageError(f"{path}: is {file_kind(exc.mode)}, not a log file") from None
    if len(data) > MAX_LOG_BYTES:
        raise UsageError(f"{path}: more than {MAX_LOG_BYTES >> 20} MiB; pass the boot's part only")
    return data.decode("utf-8", errors="replace")


def run_fit_log(registry: Registry, path: Path, opts: FitOptions) -> int:
    """Predicted vs measured for one boot log; with --record, the boot becomes evidence."""
    try:
        log = parse_log(_read_log(path))
    except LogError as exc:
        raise UsageError(f"{path}: {exc}") from None
    lock = read_lock_or_none(registry)
    fit: LogFit = fit_log(registry, log, opts, lock)
    if opts.fmt == "json":
        doc = {
            "profile": fit.profile,
            "engine": fit.engine,
            "settings": fit.settings,
            "terms": [{**asdict(t), "error": t.error} for t in fit.terms],
            "result": fit.result.as_json(),
            "notes": fit.notes,
        }
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(format_log_fit(fit))
    if opts.record:
        rig = opts.rig or registry.profiles[fit.profile].rig
        if rig not in registry.rigs:
            raise UsageError(
                f"--record needs a registry rig; {rig!r} is not one (add it under registry/rigs/)"
            )
        rel = record_evidence(registry, fit.profile, evidence_record(fit, path, rig))
        click.echo(f"recorded the boot as evidence in {rel}", err=True)
    return EXIT_OK
