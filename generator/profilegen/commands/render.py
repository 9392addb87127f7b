"""`profilegen render`: one profile to stdout or a relocatable bundle, for Compose or
Kubernetes, or the whole checked-in tree.

A compose to stdout is answered from the result cache while no byte of registry/, of the
registry's templates/ or of profilegen has changed; nothing heavier than hashing runs then.
What `check` rejects is never written: its errors, exit 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..cache import Inputs, Store
from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from .common import (
    Command,
    Context,
    echo_json,
    files_json,
    format_option,
    offline_option,
    output_options,
    pass_context,
    timeout_option,
)
from .render_k8s import Bundling, k8s_options, render_k8s

if TYPE_CHECKING:
    from ..registry import Registry

RENDER_INPUTS = ("registry", "templates")
# The docs pages also show fit predictions, which read artifact sizes from the lock.
PLAN_INPUTS = (*RENDER_INPUTS, "profilegen.lock.json")
COMPOSE_TREE = ("compose", "docs", "gateways")


@click.command("render", cls=Command, exit_1="check rejects the profile (nothing is written)")
@click.argument("profile", required=False)
@output_options("Write a relocatable bundle (compose or Kubernetes files, manifest, patches) here.")
@click.option("--all", "all_", is_flag=True, help="Rewrite the checked-in generated tree.")
@click.option(
    "--check",
    is_flag=True,
    help="With --all: write nothing, list what it would change (exit 1 if anything).",
)
@click.option(
    "--target",
    type=click.Choice(["compose", "k8s"]),
    help="What to render: a docker-compose service (default) or Kubernetes objects.",
)
@click.option("--namespace", metavar="NS", help="k8s: the namespace of every object.")
@click.option("--replicas", type=int, help="k8s: serving replicas (pods, or pod groups).")
@click.option("--nodes", type=int, help="k8s: split over N nodes (vLLM: LeaderWorkerSet).")
@click.option(
    "--model-volume",
    metavar="new|shared|claim:NAME|hostpath:PATH",
    help="k8s: where the weights live: a claim per pod filled by its loader (new, default), one "
    "ReadWriteMany claim filled by a Job (shared), or a volume filled beforehand and only "
    "verified (an existing claim, a folder on every node).",
)
@click.option(
    "--storage-class", metavar="NAME", help="k8s: the storage class of the weights' claims."
)
@click.option(
    "--hf-secret", metavar="NAME", help="k8s: the Secret holding HF_TOKEN and API_KEY (hf-token)."
)
@timeout_option
@offline_option("a bundle's remote patch files come from the cache only")
@format_option()
@pass_context
def command(
    obj: Context,
    profile: str | None,
    output: Path | None,
    force: bool,
    all_: bool,
    check: bool,
    target: str | None,
    namespace: str | None,
    replicas: int | None,
    nodes: int | None,
    model_volume: str | None,
    storage_class: str | None,
    hf_secret: str | None,
    timeout: float | None,
    offline: bool,
    fmt: str,
) -> int:
    """Render PROFILE's compose file (or Kubernetes objects) to stdout, or a bundle with -o.

    With --format json the result is one document: the files printed (with their text) or
    written (with their sizes and sha256), by path.
    """
    options, given = k8s_options(
        target, namespace, replicas, nodes, model_volume, storage_class, hf_secret
    )
    if all_:
        if profile or output:
            raise UsageError("--all renders every profile into compose/; give no PROFILE or -o")
        if force:
            raise UsageError("--force is for a bundle written with -o; --all writes compose/")
        if given:
            raise UsageError(
                f"--all writes the checked-in tree with default options; give no {', '.join(given)}"
            )
        return render_all(obj, target, fmt, check=check)
    if check:
        raise UsageError("--check goes with --all: it compares the checked-in tree")
    if not profile:
        raise UsageError("name a PROFILE to render (or use --all)")
    if options is not None:
        from ..registry import find_profile

        registry = obj.registry()
        found = find_profile(registry, profile)
        _refuse_rejected(registry, [found.id])
        return render_k8s(registry, found, options, output, Bundling(timeout, offline, force), fmt)
    if output is None and fmt == "text":
        click.echo(_compose(obj, profile).decode(), nl=False)
        return EXIT_OK
    if output is None:
        from ..registry import find_profile

        ident = find_profile(obj.registry(), profile).id
        files = {"compose.yaml": _compose(obj, ident)}
        echo_json({"profile": ident, "target": "compose", "files": files_json(files, content=True)})
        return EXIT_OK
    return _bundle(obj.registry(), profile, output, Bundling(timeout, offline, force), fmt)


def _compose(obj: Context, name: str) -> bytes:
    root = obj.root
    key = Inputs(root, RENDER_INPUTS, ("render", str(root), name)).key()
    store = Store("render")
    cached = store.get(key)
    if cached is not None:
        return cached
    from ..registry import find_profile
    from ..render import render_profile

    registry = obj.registry()
    found = find_profile(registry, name)
    _refuse_rejected(registry, [found.id])
    compose = render_profile(registry, found).compose
    store.put(key, compose)
    return compose


def _refuse_rejected(registry: Registry, idents: list[str]) -> None:
    """What `check` rejects is not written out: its errors, exit 1."""
    from ..check.scoped import blocking, profile_findings
    from ..errors import RegistryError

    errors = blocking(profile_findings(registry, idents))
    if errors:
        raise RegistryError(errors)


def _bundle(registry: Registry, name: str, output: Path, how: Bundling, fmt: str) -> int:
    from ..hub.deadline import Deadline
    from ..hub.patchfiles import collect_patch_files
    from ..registry import find_profile
    from ..render import render_profile
    from ..render.bundle import bundle_files
    from ..render.output import Owner, check_output, write_output

    found = find_profile(registry, name)
    owner = Owner("profile", found.id)
    check_output(registry.root, output, owner, force=how.force)  # before any download
    _refuse_rejected(registry, [found.id])
    rendered = render_profile(registry, found)
    # Remote patch files arrive (in parallel, within one deadline) before anything is written.
    collect_patch_files(registry, found.patches, Deadline.start(how.timeout), how.offline)
    files = bundle_files(registry, found, rendered)  # gathered and verified before any write
    write_output(registry.root, output, owner, files, force=how.force)
    if fmt == "json":
        echo_json(bundle_json(found.id, "compose", output, files))
        return EXIT_OK
    models = os.environ.get("MODEL_DIR") or "MODELS"
    click.echo(
        f"wrote {output}/ ({len(files)} files). Next, on the rig:\n"
        f"  profilegen fetch {found.id} --model-dir {models}   # the weights, downloaded and verified\n"
        f"  profilegen verify {found.id} --model-dir {models} --host   # the files and this host\n"
        f"  MODEL_DIR={models} docker compose -f {output / 'compose.yaml'} up",
        err=True,
    )
    return EXIT_OK


def bundle_json(
    ident: str, target: str, output: Path, files: dict[str, bytes]
) -> dict[str, object]:
    return {"profile": ident, "target": target, "output": str(output), "files": files_json(files)}


def render_all(
    obj: Context, target: str | None = None, fmt: str = "text", *, check: bool = False
) -> int:
    """Writes the checked-in tree: compose/, gateways/ and docs/, and k8s/ where the registry
    opts in (`--target` narrows it to one of them); `check`: only says what it would change."""
    from ..docs.catalog import orphan_pages
    from ..generated.tree import GATEWAYS_DIR, K8S_DIR, orphan_files
    from ..write import write_files

    root = obj.root
    checked_in = obj.registry().settings.kubernetes.checked_in
    if target == "k8s" and not checked_in:
        raise UsageError(
            "Kubernetes output is not checked in: set `kubernetes: {checked_in: true}` in "
            "registry/settings.yaml to opt in (or render one profile with --target k8s)"
        )
    tops = {"compose": COMPOSE_TREE, "k8s": (K8S_DIR,)}.get(target or "", (*COMPOSE_TREE, K8S_DIR))
    plan = {rel: b for rel, b in _plan(obj).items() if rel.split("/", 1)[0] in tops}
    _refuse_links(root, plan, tops, checked_in)  # before anything is listed, read or written
    orphans = []
    for top in ("compose", GATEWAYS_DIR, K8S_DIR):
        if top in tops and (top != K8S_DIR or checked_in):
            owners = {rel.split("/")[1] for rel in plan if rel.startswith(f"{top}/")}
            orphans += orphan_files(root, owners, top)
    removed = orphans + (orphan_pages(root, list(plan)) if "docs" in tops else [])
    if check:
        return _drift(root, plan, removed, tops, fmt)
    # Every file is staged first, then all are renamed (and the orphans removed) at once.
    changed = write_files(
        {root / rel: content for rel, content in plan.items()},
        remove=removed,
        prune=sorted({p.parent for p in orphans}),
        root=root,
    )
    wrote = [path.relative_to(root).as_posix() for path in changed]
    gone = [path.relative_to(root).as_posix() for path in removed]
    if fmt == "json":
        echo_json({"files": len(plan), "wrote": wrote, "removed": gone})
        return EXIT_OK
    for rel in wrote:
        click.echo(f"wrote {rel}")
    for rel in gone:
        click.echo(f"removed {rel}")
    if not changed and not removed:
        _up_to_date(plan, tops)
    return EXIT_OK


def _refuse_links(root: Path, plan: dict[str, bytes], tops: tuple[str, ...], k8s: bool) -> None:
    """A symlink where the tree is written (a generated folder, or on the way to a page) is
    refused with `check`'s findings: nothing is written, read or removed through it."""
    from ..errors import RegistryError
    from ..generated.links import GENERATED_FOLDERS, link_findings, links
    from ..generated.tree import K8S_DIR

    folders = [f for f in GENERATED_FOLDERS if f.split("/")[0] in tops and (f != K8S_DIR or k8s)]
    found = links(root, folders, plan)
    if found:
        raise RegistryError(link_findings(found))


def _up_to_date(plan: dict[str, bytes], tops: tuple[str, ...]) -> None:
    present = {rel.split("/", 1)[0] for rel in plan}
    shown = [f"{t}/" for t in tops if t in present] or [f"{t}/" for t in tops]
    listed = ", ".join(shown[:-1]) + (" and " if len(shown) > 1 else "") + shown[-1]
    verb = "is" if len(shown) == 1 else "are"
    click.echo(f"{listed} {verb} up to date ({len(plan)} files)")


def _drift(
    root: Path, plan: dict[str, bytes], removed: list[Path], tops: tuple[str, ...], fmt: str
) -> int:
    """`render --all --check`: each file it would write or remove, on stderr; exit 1 if any."""
    missing: list[str] = []
    stale: list[str] = []
    for rel, content in sorted(plan.items()):
        path = root / rel
        if not path.is_file():
            missing.append(rel)
        elif path.read_bytes() != content:
            stale.append(rel)
    gone = [p.relative_to(root).as_posix() for p in removed]
    if fmt == "json":
        echo_json({"files": len(plan), "missing": missing, "stale": stale, "removed": gone})
        return EXIT_FINDINGS if missing or stale or gone else EXIT_OK
    lines = [f"{rel}: missing" for rel in missing] + [f"{rel}: stale" for rel in stale]
    lines += [f"{rel}: not generated, would be removed" for rel in gone]
    for line in lines:
        click.echo(f"{line} (run `profilegen render --all`)", err=True)
    if not lines:
        _up_to_date(plan, tops)
    return EXIT_FINDINGS if lines else EXIT_OK


def _plan(obj: Context) -> dict[str, bytes]:
    """Every generated file, from the cache while the registry and templates are unchanged."""
    root = obj.root
    key = Inputs(root, PLAN_INPUTS, ("plan", str(root))).key()
    store = Store("plan")
    cached = store.get_object(key)
    if isinstance(cached, dict) and all(isinstance(v, bytes) for v in cached.values()):
        return cached
    from ..errors import RegistryError
    from ..generated.tree import plan_all, plan_gateways

    registry = obj.registry()
    _refuse_rejected(registry, sorted(registry.profiles))
    gateway_errors = plan_gateways(registry)[1]
    if gateway_errors:
        raise RegistryError(gateway_errors)  # before any write
    plan = plan_all(registry)
    store.put_object(key, plan)
    return plan
