"""`profilegen verify`: the model files on the rig against the lock, and with `--host` the host
itself, before the engine starts; with `--serving`, functional checks of the running server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from .common import Command, Context, format_option, pass_context
from .verify_serving import serving_options, verify_serving


@click.command(
    "verify",
    cls=Command,
    exit_1="a file is missing, truncated or corrupt (--strict: or not hash-verified), the "
    "host lacks something (--host), or a check of the running server failed (--serving)",
)
@click.argument("profile", required=False)
@click.option(
    "--model-dir",
    envvar="MODEL_DIR",
    show_envvar=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Host folder the compose mounts as the model cache (MODEL_DIR).",
)
@click.option(
    "--host",
    "host",
    is_flag=True,
    help="Check this host too: GPUs and driver, the NVIDIA container toolkit, free GPU memory "
    "for what fit predicts, the host paths the compose mounts.",
)
@click.option("--strict", is_flag=True, help="Fail on any file proved by size only, not by sha256.")
@serving_options
@format_option()
@pass_context
def command(
    obj: Context,
    /,
    profile: str | None,
    model_dir: Path | None,
    host: bool,
    strict: bool,
    fmt: str,
    **serving: Any,
) -> int:
    """Check PROFILE's files in MODEL_DIR against the lock: every shard, size and sha256.

    Says what it proved of each artifact: hash-verified (size and sha256 from the lock),
    size-only (the lock has no sha256 for it yet), missing or wrong. Never touches the network.
    Files hashed before and unchanged since (size, mtime, ctime, inode) are taken from
    MODEL_DIR/.profilegen-verified.json instead of being read again. Exit 1 names each missing,
    truncated or corrupt file (with --strict, each artifact not hash-verified too) and, with
    --host, each thing the host lacks.

    With --serving URL (or --serving PROFILE: its server on this host's published port),
    checks the running server instead: its served names and context, a chat answer, a tool
    call through the profile's tool parser, streaming, thinking on and off, a prompt filling
    the context with a needle to give back, and a concurrent multi-turn soak. One line a check
    (pass, fail, or skip/info with the reason it is not judged); exit 1 names each failure.
    """
    if serving["serving"] is not None:
        if host or strict or model_dir is not None:
            raise UsageError("--serving checks a running server: --host, --strict and "
                             "--model-dir check files and the host, without it")  # fmt: skip
        return verify_serving(obj, profile, fmt, serving)
    if profile is None:
        raise UsageError("verify needs a PROFILE (or --serving URL|PROFILE)")
    if model_dir is None:
        raise UsageError("Missing option '--model-dir' (or MODEL_DIR)")
    from ..hub.preflight import VerifyOptions, failed, proved, report_lines, verdict, verify_files
    from ..measure.host import check_host
    from ..registry import find_profile

    registry = obj.registry()
    found = find_profile(registry, profile)
    opts = VerifyOptions(found.id, model_dir, fmt, strict)
    objects, record = verify_files(registry, opts)
    checks = check_host(registry, found, model_dir) if host else []
    bad = failed(objects, strict) or not all(c.ok for c in checks)
    if fmt == "json":
        data = {"profile": found.id, "ok": not bad, "proved": proved(objects), "artifacts": objects}
        if host:
            data["host"] = [c.__dict__ for c in checks]
        click.echo(json.dumps(data, indent=2))
        return EXIT_FINDINGS if bad else EXIT_OK
    for line in report_lines(objects):
        click.echo(line)
    click.echo(verdict(found.id, objects, record, opts))
    for check in checks:
        click.echo(f"host {check.name}: {'ok' if check.ok else 'PROBLEM'}: {check.detail}")
    if host:
        lacking = sum(not c.ok for c in checks)
        click.echo(
            f"host: {lacking} problem(s) to fix before `docker compose up`"
            if lacking
            else "host: ready for `docker compose up`"
        )
    return EXIT_FINDINGS if bad else EXIT_OK
