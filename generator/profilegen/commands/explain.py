"""`profilegen explain`: what the container will run, without a GPU."""

from __future__ import annotations

import json

import click

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..explain.core import Explanation, Scenario, explain
from ..explain.k8s import explain_k8s
from ..explain.report import as_json, as_text
from ..model import Profile
from ..registry import Registry, find_profile
from ..render.targets.k8s import render_k8s
from ..render.targets.k8s_plan import K8sOptions
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
@click.option(
    "--target",
    type=click.Choice(["compose", "k8s"]),
    default="compose",
    show_default=True,
    help="The compose service, or the Kubernetes pod (-e then edits its tunables ConfigMap).",
)
@click.option("--nodes", type=int, help="k8s: split over N nodes, as `render --nodes`.")
@click.option(
    "--role",
    type=click.Choice(["leader", "worker"]),
    help="k8s over several nodes: which pod of the group (default: leader).",
)
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def command(
    obj: Context,
    profile: str,
    env: tuple[str, ...],
    gpus: int | None,
    nvlink: bool,
    target: str,
    nodes: int | None,
    role: str | None,
    fmt: str,
) -> int:
    """Show the engine argv, its environment and the patch steps PROFILE's container runs.

    The rendered compose is interpolated as Compose does and its entrypoint runs under bash
    with stub engines and a stub nvidia-smi; patches are listed, not applied. Exit 1 when the
    container would refuse to boot (the guard and its message are shown).
    """
    if target != "k8s" and (nodes is not None or role is not None):
        raise UsageError("--nodes and --role apply only to --target k8s")
    registry = obj.registry()
    found = find_profile(registry, profile)
    scenario = Scenario(tuple(_pair(e) for e in env), gpus, nvlink)
    if target == "k8s":
        result = _explain_pod(registry, found, scenario, nodes, role)
    else:
        result = explain(registry, found, scenario)
    click.echo(json.dumps(as_json(result), indent=2) if fmt == "json" else as_text(result))
    return EXIT_OK if result.launched else EXIT_FINDINGS


def _explain_pod(
    registry: Registry, profile: Profile, scenario: Scenario, nodes: int | None, role: str | None
) -> Explanation:
    rendered = render_k8s(registry, profile, K8sOptions(nodes=nodes))
    if not rendered.layout.multi_node:
        if role is not None:
            raise UsageError(f"--role: {profile.id} runs as one pod here (no leader or worker)")
        return explain_k8s(registry, profile, rendered, "server", scenario)
    return explain_k8s(registry, profile, rendered, role or "leader", scenario)
