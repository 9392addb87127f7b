"""`profilegen explain`: what the container will run, without a GPU."""

from __future__ import annotations

import json

import click

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..explain.core import Scenario, explain
from ..explain.report import as_json, as_text
from ..registry import find_profile
from .common import FORMAT_TEXT_JSON, Context, pass_context


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep:
        raise UsageError(f"-e {text}: expected VAR=VALUE")
    return name, value


@click.command("explain")
@click.argument("profile")
@click.option(
    "-e",
    "--env",
    "env",
    multiple=True,
    metavar="VAR=VALUE",
    help="Set a variable as in the shell or .env that runs `docker compose` (repeatable).",
)
@click.option(
    "--gpus", type=click.IntRange(min=1), help="GPUs the stub reports (default: the rig's)."
)
@click.option("--nvlink", is_flag=True, help="The stub reports NVLink between the GPUs.")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def command(
    obj: Context, profile: str, env: tuple[str, ...], gpus: int | None, nvlink: bool, fmt: str
) -> int:
    """Show the engine argv, its environment and the patch steps PROFILE's container runs.

    The rendered compose is interpolated as Compose does and its entrypoint runs under bash
    with stub engines and a stub nvidia-smi; patches are listed, not applied. Exit 1 when the
    container would refuse to boot (the guard and its message are shown).
    """
    registry = obj.registry()
    found = find_profile(registry, profile)
    scenario = Scenario(tuple(_pair(e) for e in env), gpus, nvlink)
    result = explain(registry, found, scenario)
    click.echo(json.dumps(as_json(result), indent=2) if fmt == "json" else as_text(result))
    return EXIT_OK if result.launched else EXIT_FINDINGS
