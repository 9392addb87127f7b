"""`profilegen render --target k8s`: the Kubernetes options and output of `render`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import EXIT_OK, UsageError
from .common import echo_json, files_json

if TYPE_CHECKING:
    from ..model import Profile
    from ..registry import Registry
    from ..render.targets.k8s_plan import K8sOptions


@dataclass(frozen=True)
class Bundling:
    """How a bundle's patch files may be had (within one deadline, or from the cache only),
    and whether it may go into a folder holding something else."""

    timeout: float | None = None
    offline: bool = False
    force: bool = False


def k8s_options(
    target: str | None,
    namespace: str | None,
    replicas: int | None,
    nodes: int | None,
    model_volume: str | None,
    storage_class: str | None,
    hf_secret: str | None,
) -> tuple[K8sOptions | None, list[str]]:
    """The Kubernetes options (None for another target), and which were given (an error for
    any other target)."""
    values = {
        "namespace": namespace,
        "replicas": replicas,
        "nodes": nodes,
        "model_volume": model_volume,
        "storage_class": storage_class,
        "hf_secret": hf_secret,
    }
    given = [f"--{name.replace('_', '-')}" for name, value in values.items() if value is not None]
    if given and target != "k8s":
        verb = "applies" if len(given) == 1 else "apply"
        raise UsageError(f"{', '.join(given)} {verb} only to --target k8s")
    if target != "k8s":
        return None, given
    from ..render.targets.k8s_plan import K8sOptions

    options = K8sOptions(
        namespace=namespace,
        replicas=1 if replicas is None else replicas,
        nodes=nodes,
        model_volume=model_volume or "new",
        storage_class=storage_class,
        hf_secret=hf_secret or "hf-token",
    )
    return options, given


def render_k8s(
    registry: Registry,
    profile: Profile,
    options: K8sOptions,
    output: Path | None,
    how: Bundling,
    fmt: str = "text",
) -> int:
    from ..hub.deadline import Deadline
    from ..hub.patchfiles import collect_patch_files
    from ..render.bundle import k8s_bundle_files
    from ..render.output import Owner, check_output, write_output
    from ..render.targets.k8s import render_k8s as build

    rendered = build(registry, profile, options)
    patches = [d.patch.id for d in rendered.plan.deliveries]
    if output is None:
        if fmt == "json":
            shown = files_json({"kubernetes.yaml": rendered.yaml}, content=True)
            echo_json({"profile": profile.id, "target": "k8s", "files": shown})
        else:
            click.echo(rendered.yaml.decode(), nl=False)
        if patches:
            click.echo(
                f"note: the ConfigMaps of {len(patches)} patch(es) carry their files: "
                "render with -o DIR to write them (patches.yaml)",
                err=True,
            )
        return EXIT_OK
    owner = Owner("profile", profile.id)
    check_output(registry.root, output, owner, force=how.force)  # before any download
    # Their ConfigMaps carry the files: gathered within one deadline, verified, then written.
    collect_patch_files(registry, patches, Deadline.start(how.timeout), how.offline)
    files = k8s_bundle_files(registry, rendered)
    write_output(registry.root, output, owner, files, force=how.force)
    if fmt == "json":
        echo_json(
            {
                "profile": profile.id,
                "target": "k8s",
                "output": str(output),
                "files": files_json(files),
            }
        )
        return EXIT_OK
    click.echo(f"wrote {output}/ ({len(files)} files): kubectl apply -f {output}/", err=True)
    return EXIT_OK
