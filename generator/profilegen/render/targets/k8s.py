"""The Kubernetes target: a profile as a Deployment (one node) or a LeaderWorkerSet (several).

Pure like the compose target: the registry and its lock in, objects and YAML out, checked
against the pinned Kubernetes and LeaderWorkerSet schemas and read back before anyone sees
them. The patch ConfigMaps need the patch files' bytes; they are built separately
(`patch_objects`) when the files have been gathered, so `check` and the checked-in tree stay
offline. What the objects do, in the order a first `kubectl apply` meets it: the weights are
loaded onto their volume and verified (k8s_weights, k8s_storage), patch files assembled
(k8s_patches), the engine started with resources and probes sized from the profile
(k8s_resources) and, over several nodes, its Ray group joined (k8s_lws).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...lockfile.lock import Lock, read_lock
from ...model import Profile
from ...registry import Registry
from ...resources import template_dirs
from ..context import Context, RenderError, environments
from ..dialects import engine_command
from .compose import entrypoint_script, render_helpers
from .k8s_header import header_rows
from .k8s_lws import leader_worker_set, multinode_args
from .k8s_patches import JOINED_DIR, PARTS_DIR, assembly_plan, patch_configmaps, plan_patches
from .k8s_plan import (
    RAY_NODE_PORT,
    RAY_PORT,
    K8sOptions,
    Layout,
    labels,
    metadata,
    object_name,
    plan_layout,
    selector,
)
from .k8s_pod import PodPlan, pod_spec, tunables_data
from .k8s_resources import join_budget_s, startup
from .k8s_schema import schema_problems
from .k8s_storage import claim, loader_job
from .k8s_weights import LOADER, PLAN, check_volume, weights_plan
from .k8s_yaml import Block, dump_objects, verify_objects

# An unset `lock` argument: the lock file is read from the registry's root (None: there is none).
READ_LOCK = object()


@dataclass(frozen=True)
class RenderedK8s:
    profile_id: str
    name: str
    layout: Layout
    objects: tuple[dict[str, Any], ...]
    scripts: Mapping[str, str]
    tunables: Mapping[str, str]
    plan: PodPlan
    yaml: bytes = b""  # set by render_k8s, once read back and validated

    def files(self) -> dict[str, bytes]:
        """Files of k8s/<id>/ (and of a bundle, with patches.yaml beside them)."""
        if not self.yaml:
            raise RenderError(f"{self.profile_id}: built, not rendered")
        return {"kubernetes.yaml": self.yaml}

    def schema_problems(self) -> list[str]:
        """What the pinned API schemas refuse in these objects (empty: all validate)."""
        return [p for obj in self.objects for p in schema_problems(obj)]

    def text(self) -> str:
        """The objects as YAML under their comment header (not read back: see render_k8s)."""
        envs = environments(tuple(template_dirs(self.plan.ctx.registry.root)))
        return dump_objects(self.objects, _header(self.plan, envs))

    def patch_objects(self, files: Mapping[str, bytes]) -> list[dict[str, Any]]:
        """The ConfigMaps of the patches, from their gathered (verified) files."""
        meta = metadata(self.name, self.plan.options, "patch")
        return patch_configmaps(self.plan.deliveries, files, meta)

    def pod(self, role: str) -> dict[str, Any]:
        """The pod spec of a role (`server`, `leader` or `worker`)."""
        for obj in self.objects:
            if obj["kind"] == "Deployment":
                return dict(obj["spec"]["template"]["spec"])
            if obj["kind"] == "LeaderWorkerSet":
                template = obj["spec"]["leaderWorkerTemplate"][f"{role}Template"]
                return dict(template["spec"])
        raise RenderError(f"{self.profile_id}: no workload rendered")

    def container_env(self, role: str) -> list[dict[str, Any]]:
        """The env list of the role's engine container."""
        return list(self.pod(role)["containers"][0]["env"])


def _annotations(ctx: Context) -> dict[str, str]:
    p = ctx.profile
    return {
        "profilegen.io/profile": p.id,
        "profilegen.io/title": p.title,
        "profilegen.io/status": p.status,
        "profilegen.io/image": ctx.engine.image_ref,
    }


def _scripts(plan: PodPlan, envs: dict[str, Any], script: str | None) -> dict[str, str]:
    ctx = plan.ctx
    if plan.layout.multi_node:
        scripts = _group_scripts(plan, envs)
    else:
        # One node runs exactly the compose service's script, from the same render function.
        scripts = {"entrypoint.sh": script or entrypoint_script(ctx, envs, engine_command(ctx))}
    # Each script sources the helpers beside it, as in the compose bundle.
    scripts["helpers.sh"] = render_helpers(envs).decode()
    scripts[LOADER] = envs["text"].get_template(f"k8s/{LOADER}.j2").render()
    scripts[PLAN] = plan.weights.text()
    joins, _ = assembly_plan(plan.deliveries)
    if joins:
        template = envs["shell"].get_template("k8s/assemble-patches.sh.j2")
        scripts["assemble-patches.sh"] = template.render(
            p=ctx.profile, files=joins, parts_root=PARTS_DIR, joined_root=JOINED_DIR
        )
    return scripts


def _render_script(plan: PodPlan, envs: dict[str, Any], template: str, **extra: Any) -> str:
    ctx = plan.ctx
    engine_template = f"entrypoint/engines/{ctx.family.template}.sh.j2"
    common = {"c": ctx, "p": ctx.profile, "cmd": engine_command(ctx), "layout": plan.layout}
    text: str = (
        envs["shell"]
        .get_template(template)
        .render(**common, engine_template=engine_template, ray_port=RAY_PORT, **extra)
    )
    return text


def _group_scripts(plan: PodPlan, envs: dict[str, Any]) -> dict[str, str]:
    """The leader's and the workers' scripts: the engine's, with another `launch` block."""
    args = multinode_args(plan.ctx, plan.layout)
    return {
        "leader.sh": _render_script(
            plan, envs, "k8s/leader.sh.j2", join_s=plan.join_s, multinode_args=args
        ),
        "worker.sh": _render_script(
            plan, envs, "k8s/worker.sh.j2", join_s=plan.join_s, node_port=RAY_NODE_PORT
        ),
    }


def _config_hash(scripts: Mapping[str, str], tunables: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for key, text in sorted({**scripts, **{f"env:{k}": v for k, v in tunables.items()}}.items()):
        digest.update(f"{key}\0{text}\0".encode())
    return digest.hexdigest()


def _configmaps(
    plan: PodPlan, scripts: Mapping[str, str], tunables: Mapping[str, str]
) -> list[dict[str, Any]]:
    base = {"apiVersion": "v1", "kind": "ConfigMap"}
    return [
        {
            **base,
            "metadata": metadata(plan.name, plan.options, "entrypoint", "-entrypoint"),
            "data": {key: Block(text) for key, text in scripts.items()},
        },
        {
            **base,
            "metadata": metadata(plan.name, plan.options, "tunables", "-tunables"),
            "data": dict(tunables),
        },
    ]


def _deployment(plan: PodPlan, annotations: dict[str, str], config: str) -> dict[str, Any]:
    pod_labels = labels(plan.name, "server")
    template_meta = {"labels": pod_labels, "annotations": {"profilegen.io/config-sha256": config}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {**metadata(plan.name, plan.options, "server"), "annotations": annotations},
        "spec": {
            "replicas": plan.options.replicas,
            # GPUs and a ReadWriteOnce volume: a new pod can start only once the old one is gone.
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": selector(pod_labels)},
            "template": {
                "metadata": template_meta,
                "spec": pod_spec(plan, "server", "entrypoint.sh"),
            },
        },
    }


def _service(plan: PodPlan, component: str) -> dict[str, Any]:
    port = {"name": "http", "port": plan.ctx.profile.port, "targetPort": "http", "protocol": "TCP"}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(plan.name, plan.options, component),
        "spec": {
            "type": "ClusterIP",
            "selector": selector(labels(plan.name, component)),
            "ports": [port],
        },
    }


def _header(plan: PodPlan, envs: dict[str, Any]) -> str:
    template = envs["text"].get_template("k8s/header.txt.j2")
    text: str = template.render(p=plan.ctx.profile, rows=header_rows(plan))
    return text


def pod_plan(
    registry: Registry, profile: Profile, options: K8sOptions, lock: Lock | None
) -> PodPlan:
    """Where the profile goes and everything its pods are sized from."""
    ctx = Context(registry, profile)
    name = object_name(profile.id)
    layout = plan_layout(ctx, options)
    weights = weights_plan(ctx, name, lock)
    check_volume(weights, options, layout)
    per_pod = layout.multi_node and options.volume.kind == "new"
    join_s = join_budget_s(weights.total_bytes, layout.nodes, per_pod)
    role = "leader" if layout.multi_node else "server"
    budgets = {role: startup(ctx, layout, weights.total_bytes, join_s)}
    return PodPlan(ctx, layout, options, name, plan_patches(ctx, name), weights, budgets, join_s)


def build_k8s(
    registry: Registry,
    profile: Profile,
    options: K8sOptions | None = None,
    script: str | None = None,
    lock: Lock | None | object = READ_LOCK,
) -> RenderedK8s:
    """The objects of one profile, not yet written out (`check` validates these).

    `script`: the profile's entrypoint as the compose target rendered it, to reuse on one node;
    `lock`: the lock file as read (default: read from the registry's root).
    """
    options = options or K8sOptions()
    options.check()
    envs = environments(tuple(template_dirs(registry.root)))
    locked = read_lock(registry.root) if lock is READ_LOCK else lock
    plan = pod_plan(registry, profile, options, locked if isinstance(locked, Lock) else None)
    scripts = _scripts(plan, envs, script)
    tunables = tunables_data(plan)
    config = _config_hash(scripts, tunables)
    annotations = _annotations(plan.ctx)
    objects: list[dict[str, Any]] = _configmaps(plan, scripts, tunables)
    objects += [o for o in (claim(plan), loader_job(plan)) if o is not None]
    if plan.layout.multi_node:
        objects.append(leader_worker_set(plan, annotations, config))
        objects.append(_service(plan, "leader"))
    else:
        objects.append(_deployment(plan, annotations, config))
        objects.append(_service(plan, "server"))
    return RenderedK8s(profile.id, plan.name, plan.layout, tuple(objects), scripts, tunables, plan)


def render_k8s(
    registry: Registry,
    profile: Profile,
    options: K8sOptions | None = None,
    script: str | None = None,
    lock: Lock | None | object = READ_LOCK,
) -> RenderedK8s:
    """Renders one profile for Kubernetes; pure: the registry in, objects and YAML out, the
    YAML read back and every object checked against the pinned schemas."""
    built = build_k8s(registry, profile, options, script, lock)
    text = built.text()
    check_objects(profile.id, text, built.objects)
    return replace(built, yaml=text.encode())


def check_objects(label: str, text: str, objects: Sequence[Mapping[str, Any]]) -> None:
    """Raises RenderError unless the YAML reads back as intended and every object validates."""
    verify_objects(label, text, objects)
    problems = [p for obj in objects for p in schema_problems(obj)]
    if problems:
        raise RenderError(f"{label}: refused by the Kubernetes schemas: " + "; ".join(problems[:5]))
