"""`profilegen fit`: a profile's per-GPU memory budget and KV pool, with what-if overrides.

`fit PROFILE` predicts, `fit calibration` judges the model on every measured boot in the
registry (`--leave-one-out` refits its constants without each record), and `fit log FILE`
reads a boot log back. The earlier spellings `fit --calibration` and `fit --from-log FILE`
still work for one release, with a note on stderr.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import UsageError, suggest
from ..fit.options import WHAT_IF_SETTINGS, FitOptions
from ..model.vocabulary import aliases_help, find_setting, spellings
from .common import Command, Context, DefaultGroup, format_option, pass_context
from .fit_run import run_calibration, run_fit, run_fit_log

F = TypeVar("F", bound=Callable[..., Any])
LOG_FILE = click.Path(dir_okay=False, path_type=Path)
SETTINGS_HELP = (
    "\b\nSETTING is the registry path or an alias (fit's option, an engine's variable):\n"
    + aliases_help(tuple(WHAT_IF_SETTINGS))
    + "\n  and "
    + ", ".join(p for p in WHAT_IF_SETTINGS if not find_setting(p).aliases)  # type: ignore[union-attr]
)


def what_if_options(fn: F) -> F:
    """The what-ifs: another rig, engine or weights, and envelope settings (`--set` or their
    option aliases)."""
    options = [
        click.option("--rig", help="Fit on this rig: a registry rig, or cards like 2x5090, 3090ti+3090."),
        click.option("--engine", help="Fit on this registry engine (another release of the same engine)."),
        click.option("--weights", help="Another weights variant of the profile's model."),
        click.option("--set", "sets", multiple=True, metavar="SETTING=VALUE",
                     help="Fit with this envelope setting (envelope.kv_cache_dtype=fp8_e4m3); repeatable."),
        click.option("--tp", type=click.IntRange(min=1), help="envelope.tp: tensor-parallel size."),
        click.option("--gpu-util", type=click.FloatRange(0, 1, min_open=True),
                     help="envelope.gpu_memory_utilization."),
        click.option("--kv-dtype", help="envelope.kv_cache_dtype (bfloat16, fp8_e4m3; llama.cpp: q8_0, q4_0)."),
        click.option("--max-model-len", type=click.IntRange(min=1), help="envelope.max_model_len: context in tokens."),
        click.option("--max-num-seqs", type=click.IntRange(min=1), help="envelope.max_num_seqs: concurrent sequences."),
        click.option("--max-num-batched-tokens", type=click.IntRange(min=1),
                     help="envelope.max_num_batched_tokens: prefill chunk in tokens."),
        click.option("--spec-n", type=click.IntRange(min=0), help="drafter.width: draft width; 0 turns the drafter off."),
        click.option("--kv-cache-memory", type=click.IntRange(min=1), metavar="BYTES",
                     help="envelope.kv_cache_memory: vLLM's KV pool per GPU (replaces the utilization budget)."),
        click.option("--reserve-mib", type=click.IntRange(min=0), metavar="MIB",
                     help="MiB a display holds on the first card (its compositor), in place of the rig's own; 0: none."),
    ]  # fmt: skip
    for option in reversed(options):
        fn = option(fn)
    return fn


def what_ifs(given: dict[str, Any], sets: tuple[str, ...]) -> dict[str, Any]:
    """The options' what-ifs and `--set`'s, as FitOptions fields; one value per setting."""
    merged = {k: v for k, v in given.items() if v is not None}
    for item in sets:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--set {item}: expected SETTING=VALUE (envelope.max_model_len=65536)")
        found = find_setting(key)
        if found is None:
            close = suggest(key, spellings())
            hint = f"did you mean {close}?" if close else "see `profilegen fit --help`"
            raise UsageError(f"--set {key}: no envelope setting is called that ({hint})")
        field = WHAT_IF_SETTINGS.get(found.path)
        if field is None:
            raise UsageError(
                f"--set {key}: fit cannot vary {found.path}; it varies "
                + ", ".join(WHAT_IF_SETTINGS)
            )
        try:
            value = found.parse(raw)
        except ValueError as exc:
            raise UsageError(f"--set {key}={raw}: {exc}") from None
        if merged.get(field, value) != value:
            raise UsageError(f"{found.path} is given twice, with different values")
        merged[field] = value
    return merged


def _deprecated(old: str, new: str) -> None:
    click.echo(
        f"note: `fit {old}` is deprecated and goes in a later release: use `profilegen fit {new}`",
        err=True,
    )


@click.group("fit", cls=DefaultGroup, default="profile", epilog=SETTINGS_HELP)
def command() -> None:
    """Predict PROFILE's per-GPU memory budget and KV pool (exit 1 when it does not fit).

    `fit calibration` judges the fit on every measured boot; `fit log FILE` reads a boot log.
    """


@command.command("profile", cls=Command, hidden=True, exit_1="PROFILE does not fit")
@click.argument("profile", required=False)
@what_if_options
@format_option()
@click.option("--calibration", is_flag=True, hidden=True, help="now `fit calibration`.")
@click.option(
    "--leave-one-out",
    is_flag=True,
    hidden=True,
    help="now `fit calibration --leave-one-out`.",
)
@click.option("--from-log", type=LOG_FILE, hidden=True, help="now `fit log FILE`.")
@click.option("--profile", "log_profile", hidden=True, help="now `fit log FILE --profile P`.")
@click.option("--record", is_flag=True, hidden=True, help="now `fit log FILE --record`.")
@pass_context
def fit_profile(
    obj: Context, /, profile: str | None, sets: tuple[str, ...], fmt: str, calibration: bool,
    leave_one_out: bool, from_log: Path | None, log_profile: str | None, record: bool,
    **given: Any,
) -> int:  # fmt: skip
    """Predict PROFILE's per-GPU memory budget and KV pool (exit 1 when it does not fit)."""
    changes = what_ifs(given, sets)
    if calibration or leave_one_out:
        if not calibration:
            raise UsageError("--leave-one-out goes with `fit calibration`")
        _deprecated("--calibration", "calibration")
        if changes:
            raise UsageError("fit calibration takes no what-if options")
        return run_calibration(obj.registry(), FitOptions(fmt=fmt, leave_one_out=leave_one_out))
    if from_log is not None:
        _deprecated("--from-log FILE", "log FILE")
        if profile and log_profile and profile != log_profile:
            raise UsageError("name the profile once: PROFILE or --profile")
        return _fit_log(obj, from_log, log_profile or profile, record, fmt, changes)
    if record or log_profile:
        raise UsageError("--record and --profile go with `fit log FILE`")
    if not profile:
        raise UsageError("name a PROFILE to fit (or use `fit calibration` or `fit log FILE`)")
    return run_fit(obj.registry(), FitOptions(profile=profile, fmt=fmt, **changes))


@command.command("calibration", cls=Command, exit_1="a prediction is off or a constant is stale")
@click.option(
    "--leave-one-out",
    is_flag=True,
    help="Refit the constants without each fitted record and predict it.",
)
@format_option()
@pass_context
def calibration(obj: Context, leave_one_out: bool, fmt: str) -> int:  # fmt: skip
    """Predicted vs measured for every evidence record, and every calibrated constant refitted."""
    return run_calibration(obj.registry(), FitOptions(fmt=fmt, leave_one_out=leave_one_out))


@command.command("log", cls=Command, exit_1="the registry has errors")
@click.argument("file", type=LOG_FILE)
@click.option(
    "--profile",
    "log_profile",
    metavar="PROFILE",
    help="The profile the log belongs to (default: found from the log).",
)
@click.option("--record", is_flag=True, help="Add the boot to the profile's evidence.")
@what_if_options
@format_option()
@pass_context
def log(
    obj: Context, /, file: Path, log_profile: str | None, record: bool, sets: tuple[str, ...], fmt: str,
    **given: Any,
) -> int:  # fmt: skip
    """Read a vLLM, llama.cpp or SGLang boot log: predicted vs measured, term by term."""
    return _fit_log(obj, file, log_profile, record, fmt, what_ifs(given, sets))


def _fit_log(
    obj: Context, path: Path, profile: str | None, record: bool, fmt: str, changes: dict[str, Any]
) -> int:
    opts = FitOptions(profile=profile, fmt=fmt, record=record, from_log=str(path), **changes)
    return run_fit_log(obj.registry(), path, opts)
