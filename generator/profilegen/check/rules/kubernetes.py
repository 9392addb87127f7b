"""Kubernetes: every profile renders for a cluster and its objects pass the API schemas."""

from __future__ import annotations

from collections.abc import Iterator

from ...cache import Store
from ...errors import Finding, Location, ProfilegenError
from ...generated.tree import k8s_all
from ...render.memo import profile_key
from ...render.targets.k8s import RenderedK8s
from ...render.targets.k8s_plan import K8sError
from .base import CheckContext, rule

# (where, message, hint) of one problem; `where` None: the profile itself.
Problem = tuple[Location | None, str, str | None]


@rule(
    "k8s",
    "every profile renders for Kubernetes (`render --target k8s`) and its objects validate "
    "against the pinned Kubernetes and LeaderWorkerSet schemas",
)
def kubernetes(ctx: CheckContext) -> Iterator[Finding]:
    for profile_id, problems in sorted(_problems(ctx).items()):
        for at, message, hint in problems:
            where = at or ctx.registry.where("profiles", profile_id)
            yield ctx.finding("k8s", where, message, hint)


def _problems(ctx: CheckContext) -> dict[str, list[Problem]]:
    """Each rendered profile's problems, reused while nothing the profile reads has changed
    (unless the k8s/ tree is checked in, when `check` builds every profile anyway)."""
    if ctx.registry.settings.kubernetes.checked_in:
        return {pid: _of(pid, built) for pid, built in ctx.k8s.items()}
    store = Store("k8s-check")
    out: dict[str, list[Problem]] = {}
    for profile_id in ctx.rendered:
        key = profile_key(ctx.registry, ctx.registry.profiles[profile_id], "k8s-check")
        hit = store.get_object(key)
        if not isinstance(hit, list):
            one = {profile_id: ctx.rendered[profile_id]}
            hit = _of(profile_id, k8s_all(ctx.registry, one, verify=False)[profile_id])
            store.put_object(key, hit)
        out[profile_id] = hit
    return out


def _of(profile_id: str, built: RenderedK8s | ProfilegenError) -> list[Problem]:
    if isinstance(built, K8sError):
        at = built.where if isinstance(built.where, Location) else None
        return [(at, built.detail, "as `profilegen render --target k8s`")]
    if isinstance(built, Exception):
        return [(None, f"{profile_id}: {built}", None)]
    return [(None, f"{profile_id}: {problem}", None) for problem in built.schema_problems()]
