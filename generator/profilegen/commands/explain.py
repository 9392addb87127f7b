"""`profilegen explain`: what the container will run, without a GPU."""

from __future__ import annotations

import json

import click

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..explain.core import ENV_NAME, Explanation, Scenario, explain
from ..explain.k8s import explain_k8s
from ..explain.report import as_json, as_text
from ..model import Profile
from ..model.vocabulary import aliases_help, engine_variables, find_setting
from ..registry import Registry, find_profile
from ..render.targets.k8s import render_k8s
from ..render.targets.k8s_plan import K8sOptions
from .common import Command, Context, format_option, pass_context


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep:
        raise UsageError(f"-e {text}: expected VAR=VALUE")
    return name, value


def _variable(registry: Registry, profile: Profile, name: str) -> str:
    """The variable `name` sets: itself, or for a setting (`envelope.kv_cache_dtype`, or an
    alias the engine does not read: KV_TYPE on vLLM) the variable the engine reads it from."""
    found = find_setting(name)
    own = {*profile.tunables, *(a for names in profile.tunable_aliases.values() for a in names)}
    if found is None or name in own:
        return name
    engine = registry.engines[profile.engine]
    names = engine_variables(engine, found)
    if name in names:
        return name
    if names:
        return names[0]
    if ENV_NAME.fullmatch(name):
        return name  # the profile may read it all the same; the scenario check says if not
    raise UsageError(
        f"-e {name}: {engine.id} reads {found.path} from no variable (the profile fixes it)"
    )


@click.command(
    "explain",
    cls=Command,
    exit_1="the container would refuse to boot",
    epilog="\b\nSettings and their aliases (-e takes any of them):\n" + aliases_help(),
)
@click.argument("profile")
@click.option(
    "-e",
    "--env",
    "env",
    multiple=True,
    metavar="VAR=VALUE",
    help="Set a variable as in the shell or .env that runs `docker compose` (repeatable); "
    "an envelope setting by its registry path (envelope.kv_cache_dtype=fp8) or alias sets the "
    "variable the engine reads it from.",
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
@format_option()
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
    pairs = [_pair(e) for e in env]
    scenario = Scenario(tuple((_variable(registry, found, n), v) for n, v in pairs), gpus, nvlink)
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
