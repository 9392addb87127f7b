"""Kubernetes: every profile renders for a cluster and its objects pass the API schemas."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Location
from ...render.targets.k8s_plan import K8sError
from .base import CheckContext, rule


@rule(
    "k8s",
    "every profile renders for Kubernetes (`render --target k8s`) and its objects validate "
    "against the pinned Kubernetes and LeaderWorkerSet schemas",
)
def kubernetes(ctx: CheckContext) -> Iterator[Finding]:
    for profile_id, built in sorted(ctx.k8s.items()):
        where = ctx.registry.where("profiles", profile_id)
        if isinstance(built, K8sError):
            at = built.where if isinstance(built.where, Location) else where
            yield ctx.finding("k8s", at, built.detail, hint="as `profilegen render --target k8s`")
        elif isinstance(built, Exception):
            yield ctx.finding("k8s", where, f"{profile_id}: {built}")
        else:
            for problem in built.schema_problems():
                yield ctx.finding("k8s", where, f"{profile_id}: {problem}")
