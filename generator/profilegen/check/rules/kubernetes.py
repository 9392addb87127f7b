"""Kubernetes: every profile renders for a cluster and its objects pass the API schemas."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from functools import partial

from ...cache import Store
from ...errors import Finding, Location, ProfilegenError, Severity, Value
from ...generated.tree import k8s_all
from ...lockfile.artifacts import profile_artifacts
from ...render.memo import profile_key
from ...render.targets.k8s import RenderedK8s
from ...render.targets.k8s_plan import K8sError
from ...render.targets.k8s_weights import NoLoaderImage
from .base import CheckContext, rule

# (rule, where, message, hint, follows) of one problem; `where` None: the profile itself;
# `follows`: the profile values it is a consequence of (check/derived.py).
Problem = tuple[str, Location | None, str, str | None, tuple[Value, ...]]
SETTINGS = "registry/settings.yaml"
SHOWN = 3


@rule(
    "k8s",
    "every profile renders for Kubernetes (`render --target k8s`) and its objects validate "
    "against the pinned Kubernetes and LeaderWorkerSet schemas",
)
def kubernetes(ctx: CheckContext) -> Iterator[Finding]:
    yield from _findings(ctx, "k8s")


@rule(
    "k8s-hostpath",
    "a profile's Kubernetes pod mounts a path of its node (hostPath): every node needs it, and "
    'Pod Security "baseline" refuses the pod',
    Severity.WARNING,
)
def host_paths(ctx: CheckContext) -> Iterator[Finding]:
    yield from _findings(ctx, "k8s-hostpath")


@rule(
    "k8s-loader",
    "every profile can load its weights on a cluster: its engine's image runs the loader, or "
    "registry/settings.yaml names an image that can (kubernetes.loader_image)",
    Severity.WARNING,
)
def loader_images(ctx: CheckContext) -> Iterator[Finding]:
    """One finding for the registry: the setting is missing once, whoever needs it."""
    missing = {
        pid: engine
        for pid, problems in sorted(_problems(ctx).items())
        for found, _, engine, _, _ in problems
        if found == "k8s-loader"
    }
    if not missing:
        return
    lacking, engines = list(missing), sorted(set(missing.values()))
    named = ", ".join(lacking[:SHOWN])
    if len(lacking) > SHOWN:
        named += f" and {len(lacking) - SHOWN} more"
    registry = ctx.registry
    where = (
        registry.where("settings", "settings")
        if ("settings", "settings") in registry.sources
        else Location(SETTINGS)
    )
    yield ctx.report(
        where,
        f"{len(lacking)} profile(s) cannot load their weights on a cluster ({named}): engines "
        f"{', '.join(sorted(engines))} have no Python with huggingface_hub in their image and "
        "kubernetes.loader_image names none",
        "set kubernetes.loader_image to an image with Python and huggingface_hub (a vLLM image "
        "has both)",
    )


def _findings(ctx: CheckContext, rule_id: str) -> Iterator[Finding]:
    for profile_id, problems in sorted(_problems(ctx).items()):
        for found, at, message, hint, follows in problems:
            if found == rule_id:
                where = at or ctx.registry.where("profiles", profile_id)
                yield ctx.finding(rule_id, where, message, hint, follows=follows)


def _problems(ctx: CheckContext) -> dict[str, list[Problem]]:
    """Each rendered profile's problems, reused while nothing the profile reads has changed
    (unless the k8s/ tree is checked in, when `check` builds every profile anyway)."""
    return ctx.shared(_all_problems)


def _all_problems(ctx: CheckContext) -> dict[str, list[Problem]]:
    if ctx.registry.settings.kubernetes.checked_in:
        return {pid: _of(pid, built) for pid, built in ctx.k8s.items()}
    return _stored(ctx)


def _is_list(hit: object) -> bool:
    return isinstance(hit, list)


def _problems_of(ctx: CheckContext, profile_id: str) -> list[Problem]:
    one = {profile_id: ctx.rendered[profile_id]}
    built = k8s_all(ctx.registry, one, verify=False, lock=ctx.usable_lock)[profile_id]
    return _of(profile_id, built)


def _stored(ctx: CheckContext) -> dict[str, list[Problem]]:
    store = Store("k8s-check")
    out: dict[str, list[Problem]] = {}
    for profile_id in ctx.rendered:
        out[profile_id] = store.remember(
            _key(ctx, profile_id), partial(_problems_of, ctx, profile_id), _is_list
        )
    return out


def _key(ctx: CheckContext, profile_id: str) -> str | None:
    """What the render reads: the profile's inputs and its artifacts' lock entries."""
    profile = ctx.registry.profiles[profile_id]
    key = profile_key(ctx.registry, profile, "k8s-check")
    if key is None:
        return None
    lock = ctx.usable_lock
    entries = [
        lock.artifacts.get(k) if lock else None
        for _, k, _ in profile_artifacts(ctx.registry, profile)
    ]
    settings = ctx.registry.settings.model_dump_json()
    text = json.dumps([key, entries, settings], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _of(profile_id: str, built: RenderedK8s | ProfilegenError) -> list[Problem]:
    if isinstance(built, NoLoaderImage):
        return [("k8s-loader", None, built.engine, None, ())]
    if isinstance(built, K8sError):
        at = built.where if isinstance(built.where, Location) else None
        return [("k8s", at, built.detail, "as `profilegen render --target k8s`", built.follows)]
    if isinstance(built, Exception):
        return [("k8s", None, f"{profile_id}: {built}", None, ())]
    found: list[Problem] = [
        ("k8s", None, f"{profile_id}: {problem}", None, ()) for problem in built.schema_problems()
    ]
    return found + _host_paths(built)


def _host_paths(built: RenderedK8s) -> list[Problem]:
    profile = built.plan.ctx.profile
    mounts = profile.kubernetes.mounts if profile.kubernetes else {}
    out: list[Problem] = []
    for mount_id, cluster in mounts.items():
        mount = profile.mounts.get(mount_id)
        if cluster.host_type is None or mount is None:
            continue
        at = built.plan.ctx.registry.where(
            "profiles", profile.id, ("kubernetes", "mounts", mount_id)
        )
        message = (
            f"mount {mount_id} is the node's own {mount.host} (hostPath {cluster.host_type}): "
            'every node needs it, and Pod Security "baseline" refuses hostPath volumes'
        )
        hint = (
            f"copy it out of an image instead (kubernetes.mounts.{mount_id}: image, path), or "
            "serve the profile where the namespace does not enforce baseline"
        )
        out.append(("k8s-hostpath", at, message, hint, ()))
    return out
