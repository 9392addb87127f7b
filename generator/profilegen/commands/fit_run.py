"""How `fit` runs and reports: a profile's fit, the calibration, and a boot log read back."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..fit.calibrate import (
    TOLERANCE,
    TOLERANCE_ROUNDED,
    CalibrationPoint,
    calibration_points,
    profile_points,
)
from ..fit.fromlog import LogFit, fit_log
from ..fit.logs import MAX_LOG_BYTES, LogError, parse_log
from ..fit.predict import FitOptions, fit_profile, read_lock_or_none, what_would_fit
from ..fit.refit import constant_checks, leave_one_out
from ..fit.report import (
    format_calibration,
    format_constants,
    format_evidence,
    format_log_fit,
    format_text,
)
from ..registry import Registry, find_profile
from ..registry.files import NotRegular, file_kind, read_regular
from .fit_pool import sized
from .fit_record import record_log


def _points_json(points: list[CalibrationPoint]) -> list[dict[str, Any]]:
    return [{**asdict(p), "within": p.within, "status": p.status} for p in points]


def run_calibration(registry: Registry, opts: FitOptions) -> int:
    """0 when every prediction is within tolerance and no constant is stale, else 1."""
    lock = read_lock_or_none(registry)
    points = sized(
        lambda: (
            leave_one_out(registry, lock)
            if opts.leave_one_out
            else calibration_points(registry, lock)
        )
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
    off = any(p.off for p in points)
    stale = any(c.stale for c in checks)
    return EXIT_FINDINGS if off or stale else EXIT_OK


def run_fit(registry: Registry, opts: FitOptions) -> int:
    """0 fits, 1 does not fit."""
    assert opts.profile is not None  # the command line names one
    lock = read_lock_or_none(registry)
    profile = find_profile(registry, opts.profile)
    result, (points, failed) = sized(
        lambda: (
            fit_profile(registry, profile, opts, lock=lock),
            # How the fit did on this profile's own recorded boots, read with the answer.
            profile_points(registry, profile.id, lock),
        )
    )
    result = what_would_fit(registry, profile, opts, result, lock)
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
    text = _read_log(path)
    try:
        log = parse_log(text)
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
        record_log(registry, path, text, fit, opts.rig)
    return EXIT_OK
