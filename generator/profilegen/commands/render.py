"""`profilegen render`: one profile to stdout or a relocatable bundle, for Compose or
Kubernetes, or the whole checked-in tree."""

from __future__ import annotations

from pathlib import Path

import click

from ..docs.catalog import remove_orphan_pages
from ..errors import EXIT_OK, UsageError
from ..generated.tree import COMPOSE_DIR, K8S_DIR, plan_all, remove_orphans
from ..hub.deadline import Deadline
from ..hub.patchfiles import collect_patch_files
from ..model import Profile
from ..registry import Registry, find_profile
from ..render import render_profile
from ..render.bundle import bundle_files, k8s_bundle_files, write_bundle
from ..render.targets.k8s import render_k8s
from ..render.targets.k8s_plan import K8sOptions
from ..write import write_files
from .common import Context, pass_context, timeout_option


@click.command("render")
@click.argument("profile", required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write a relocatable bundle (compose or Kubernetes files, manifest, patches) here.",
)
@click.option("--all", "all_", is_flag=True, help="Rewrite the checked-in generated tree.")
@click.option(
    "--target",
    type=click.Choice(["compose", "k8s"]),
    help="What to render: a docker-compose service (default) or Kubernetes objects.",
)
@click.option("--namespace", metavar="NS", help="k8s: the namespace of every object.")
@click.option("--replicas", type=int, help="k8s: serving replicas (pods, or pod groups).")
@click.option("--nodes", type=int, help="k8s: split over N nodes (vLLM: LeaderWorkerSet).")
@click.option(
    "--host-data-dir",
    metavar="PATH",
    help="k8s: a folder on every node (models/, cache/) instead of a PersistentVolumeClaim.",
)
@click.option("--hf-secret", metavar="NAME", help="k8s: the Secret holding HF_TOKEN (hf-token).")
@timeout_option
@pass_context
def command(
    obj: Context,
    profile: str | None,
    output: Path | None,
    all_: bool,
    target: str | None,
    namespace: str | None,
    replicas: int | None,
    nodes: int | None,
    host_data_dir: str | None,
    hf_secret: str | None,
    timeout: float | None,
) -> int:
    """Render PROFILE's compose file (or Kubernetes objects) to stdout, or a bundle with -o."""
    options, given = _k8s_options(target, namespace, replicas, nodes, host_data_dir, hf_secret)
    registry = obj.registry()
    if all_:
        if profile or output:
            raise UsageError("--all renders every profile into compose/; give no PROFILE or -o")
        if given:
            raise UsageError(
                f"--all writes the checked-in tree with default options; give no {', '.join(given)}"
            )
        return render_all(registry, target)
    if not profile:
        raise UsageError("name a PROFILE to render (or use --all)")
    found = find_profile(registry, profile)
    if target == "k8s":
        return _render_k8s(registry, found, options, output, timeout)
    rendered = render_profile(registry, found)
    if output is None:
        click.echo(rendered.compose.decode(), nl=False)
        return EXIT_OK
    # Remote patch files arrive (in parallel, within one deadline) before anything is written.
    collect_patch_files(registry, found.patches, Deadline.start(timeout))
    files = bundle_files(registry, found, rendered)  # gathered and verified before any write
    write_bundle(output, files)
    click.echo(
        f"wrote {output}/ ({len(files)} files): docker compose -f {output / 'compose.yaml'} up",
        err=True,
    )
    return EXIT_OK


def _k8s_options(
    target: str | None,
    namespace: str | None,
    replicas: int | None,
    nodes: int | None,
    host_data_dir: str | None,
    hf_secret: str | None,
) -> tuple[K8sOptions, list[str]]:
    """The Kubernetes options, and which were given (an error for any other target)."""
    values = {
        "namespace": namespace,
        "replicas": replicas,
        "nodes": nodes,
        "host_data_dir": host_data_dir,
        "hf_secret": hf_secret,
    }
    given = [f"--{name.replace('_', '-')}" for name, value in values.items() if value is not None]
    if given and target != "k8s":
        verb = "applies" if len(given) == 1 else "apply"
        raise UsageError(f"{', '.join(given)} {verb} only to --target k8s")
    options = K8sOptions(
        namespace=namespace,
        replicas=1 if replicas is None else replicas,
        nodes=nodes,
        host_data_dir=host_data_dir,
        hf_secret=hf_secret or "hf-token",
    )
    return options, given


def _render_k8s(
    registry: Registry,
    profile: Profile,
    options: K8sOptions,
    output: Path | None,
    timeout: float | None,
) -> int:
    rendered = render_k8s(registry, profile, options)
    small = [d.patch.id for d in rendered.plan.deliveries if d.via == "configmap"]
    if output is None:
        click.echo(rendered.yaml.decode(), nl=False)
        if small:
            click.echo(
                f"note: the ConfigMaps of {len(small)} patch(es) carry their files: "
                "render with -o DIR to write them (patches.yaml)",
                err=True,
            )
        return EXIT_OK
    # Their ConfigMaps carry the files: gathered within one deadline, verified, then written.
    collect_patch_files(registry, small, Deadline.start(timeout))
    files = k8s_bundle_files(registry, rendered)
    write_bundle(output, files)
    click.echo(f"wrote {output}/ ({len(files)} files): kubectl apply -f {output}/", err=True)
    return EXIT_OK


def render_all(registry: Registry, target: str | None = None) -> int:
    """Writes the checked-in tree: compose/ and docs/, and k8s/ where the registry opts in
    (`--target` narrows it to one of them)."""
    checked_in = registry.settings.kubernetes.checked_in
    if target == "k8s" and not checked_in:
        raise UsageError(
            "Kubernetes output is not checked in: set `kubernetes: {checked_in: true}` in "
            "registry/settings.yaml to opt in (or render one profile with --target k8s)"
        )
    tops = {"compose": (COMPOSE_DIR, "docs"), "k8s": (K8S_DIR,)}.get(
        target or "", (COMPOSE_DIR, "docs", K8S_DIR)
    )
    plan = {rel: b for rel, b in plan_all(registry).items() if rel.split("/", 1)[0] in tops}
    changed = write_files({registry.root / rel: content for rel, content in plan.items()})
    removed = []
    for top in (COMPOSE_DIR, K8S_DIR):
        if top in tops and (top == COMPOSE_DIR or checked_in):
            profiles = {rel.split("/")[1] for rel in plan if rel.startswith(f"{top}/")}
            removed += remove_orphans(registry.root, profiles, top)
    if "docs" in tops:
        removed += remove_orphan_pages(registry.root, list(plan))
    for path in changed:
        click.echo(f"wrote {path.relative_to(registry.root).as_posix()}")
    for path in removed:
        click.echo(f"removed {path.relative_to(registry.root).as_posix()}")
    if not changed and not removed:
        shown = [f"{t}/" for t in tops if t != K8S_DIR or checked_in]
        verb = "is" if len(shown) == 1 else "are"
        click.echo(
            f"{', '.join(shown[:-1])}{' and ' if len(shown) > 1 else ''}{shown[-1]} {verb} up to date ({len(plan)} files)"
        )
    return EXIT_OK
