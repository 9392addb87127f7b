"""The Kubernetes target: a profile as a Deployment (one node) or a LeaderWorkerSet (several).

Pure like the compose target: the registry in, objects and YAML out, checked against the
pinned Kubernetes and LeaderWorkerSet schemas and read back before anyone sees them. The
patch ConfigMaps need the patch files' bytes; they are built separately (`patch_objects`)
when the files have been gathered, so `check` and the checked-in tree stay offline.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...model import Profile
from ...registry import Registry
from ...resources import template_dirs
from ..context import Context, RenderError, environments
from ..dialects import engine_command
from .compose import ENGINE_TEMPLATES, render_helpers
from .k8s_lws import leader_worker_set, multinode_args
from .k8s_patches import FETCH_DIR, fetch_plan, patch_configmaps, plan_patches
from .k8s_plan import (
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
from .k8s_schema import K8S_VERSION, LWS_VERSION, schema_problems
from .k8s_yaml import Block, dump_objects, verify_objects

# How long a worker waits for the leader's Ray head before it gives up (and restarts).
RAY_WAIT_S = 600
SPEC_PP_NOTE = (
    "speculative decoding is pinned off (SPEC=off): vLLM does not boot it with pipeline "
    "parallelism (vllm-project/vllm#57755)"
)


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
        return dump_objects(self.objects, _header(self.plan.ctx, self.plan, envs))

    def patch_objects(self, files: Mapping[str, bytes]) -> list[dict[str, Any]]:
        """The ConfigMaps of the small patches, from their gathered (verified) files."""
        meta = metadata(self.name, self.plan.options, "patch")
        return patch_configmaps(self.plan.deliveries, files, meta)

    def container_env(self, role: str) -> list[dict[str, Any]]:
        """The env list of the role's container (`server`, `leader` or `worker`)."""
        for obj in self.objects:
            if obj["kind"] == "Deployment":
                return list(obj["spec"]["template"]["spec"]["containers"][0]["env"])
            if obj["kind"] == "LeaderWorkerSet":
                template = obj["spec"]["leaderWorkerTemplate"][f"{role}Template"]
                return list(template["spec"]["containers"][0]["env"])
        raise RenderError(f"{self.profile_id}: no workload rendered")


def _annotations(ctx: Context) -> dict[str, str]:
    p = ctx.profile
    return {
        "profilegen.io/profile": p.id,
        "profilegen.io/title": p.title,
        "profilegen.io/status": p.status,
        "profilegen.io/image": ctx.engine.image_ref,
    }


def _scripts(
    ctx: Context, plan: PodPlan, envs: dict[str, Any], script: str | None
) -> dict[str, str]:
    if plan.layout.multi_node:
        scripts = _group_scripts(ctx, plan, envs)
    else:
        # One node runs exactly the compose service's script.
        scripts = {"entrypoint.sh": script or _render_script(ctx, envs, _engine_template(ctx))}
    # Each script sources the helpers beside it, as in the compose bundle.
    scripts["helpers.sh"] = render_helpers(envs).decode()
    fetches, _ = fetch_plan(plan.deliveries)
    if fetches:
        template = envs["shell"].get_template("k8s/fetch-patches.sh.j2")
        scripts["fetch-patches.sh"] = template.render(
            p=ctx.profile, fetches=fetches, fetch_root=FETCH_DIR
        )
    return scripts


def _engine_template(ctx: Context) -> str:
    return f"entrypoint/engines/{ENGINE_TEMPLATES[ctx.engine.kind]}.sh.j2"


def _render_script(ctx: Context, envs: dict[str, Any], template: str, **extra: Any) -> str:
    common = {"c": ctx, "p": ctx.profile, "cmd": engine_command(ctx)}
    text: str = (
        envs["shell"]
        .get_template(template)
        .render(**common, engine_template=_engine_template(ctx), **extra)
    )
    return text


def _group_scripts(ctx: Context, plan: PodPlan, envs: dict[str, Any]) -> dict[str, str]:
    """The leader's and the workers' scripts: the engine's, with another `launch` block."""
    extra = {"layout": plan.layout, "ray_port": RAY_PORT, "ray_wait_s": RAY_WAIT_S}
    args = multinode_args(ctx, plan.layout)
    return {
        "leader.sh": _render_script(ctx, envs, "k8s/leader.sh.j2", **extra, multinode_args=args),
        "worker.sh": _render_script(ctx, envs, "k8s/worker.sh.j2", **extra),
    }


def _config_hash(scripts: Mapping[str, str], tunables: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for key, text in sorted({**scripts, **{f"env:{k}": v for k, v in tunables.items()}}.items()):
        digest.update(f"{key}\0{text}\0".encode())
    return digest.hexdigest()


def _pvc(ctx: Context, plan: PodPlan) -> dict[str, Any]:
    """The data volume: weights plus room for the compile caches (an estimate to edit)."""
    artifacts = [ctx.weights, ctx.mmproj, ctx.drafter.artifact if ctx.drafter else None]
    size = sum(a.size.bytes for a in artifacts if a is not None and a.size is not None)
    gib = max(20, math.ceil(size * 1.2 / 2**30) + 10)
    # Several pods (a group's nodes, or replicas) read the same weights: a shared volume.
    shared = plan.layout.multi_node or plan.options.replicas > 1
    access = "ReadWriteMany" if shared else "ReadWriteOnce"
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(plan.name, plan.options, "data", "-data"),
        "spec": {"accessModes": [access], "resources": {"requests": {"storage": f"{gib}Gi"}}},
    }


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


def _notes(plan: PodPlan) -> list[str]:
    notes = [SPEC_PP_NOTE] if plan.spec_pinned_off else []
    shared = plan.layout.multi_node or plan.options.replicas > 1
    if shared and not plan.options.host_data_dir:
        notes.append("the data volume is ReadWriteMany: every pod reads the same weights")
    return notes


def _header(ctx: Context, plan: PodPlan, envs: dict[str, Any]) -> str:
    text: str = (
        envs["text"]
        .get_template("k8s/header.txt.j2")
        .render(
            c=ctx,
            p=ctx.profile,
            layout=plan.layout,
            name=plan.name,
            secret=plan.options.hf_secret,
            host_data_dir=plan.options.host_data_dir,
            k8s_version=K8S_VERSION,
            lws_version=LWS_VERSION,
            notes=_notes(plan),
        )
    )
    return text


def build_k8s(
    registry: Registry,
    profile: Profile,
    options: K8sOptions | None = None,
    script: str | None = None,
) -> RenderedK8s:
    """The objects of one profile, not yet written out (`check` validates these).

    `script`: the profile's entrypoint as the compose target rendered it, to reuse on one node.
    """
    options = options or K8sOptions()
    options.check()
    envs = environments(tuple(template_dirs(registry.root)))
    ctx = Context(registry, profile)
    name = object_name(profile.id)
    layout = plan_layout(ctx, options)
    plan = PodPlan(ctx, layout, options, name, plan_patches(ctx, name))
    scripts = _scripts(ctx, plan, envs, script)
    tunables = tunables_data(plan)
    config = _config_hash(scripts, tunables)
    annotations = _annotations(ctx)
    objects: list[dict[str, Any]] = _configmaps(plan, scripts, tunables)
    if not options.host_data_dir:
        objects.append(_pvc(ctx, plan))
    if layout.multi_node:
        objects.append(leader_worker_set(plan, annotations, config))
        objects.append(_service(plan, "leader"))
    else:
        objects.append(_deployment(plan, annotations, config))
        objects.append(_service(plan, "server"))
    return RenderedK8s(profile.id, name, layout, tuple(objects), scripts, tunables, plan)


def render_k8s(
    registry: Registry,
    profile: Profile,
    options: K8sOptions | None = None,
    script: str | None = None,
) -> RenderedK8s:
    """Renders one profile for Kubernetes; pure: the registry in, objects and YAML out, the
    YAML read back and every object checked against the pinned schemas."""
    built = build_k8s(registry, profile, options, script)
    text = built.text()
    check_objects(profile.id, text, built.objects)
    return replace(built, yaml=text.encode())


def check_objects(label: str, text: str, objects: Sequence[Mapping[str, Any]]) -> None:
    """Raises RenderError unless the YAML reads back as intended and every object validates."""
    verify_objects(label, text, objects)
    problems = [p for obj in objects for p in schema_problems(obj)]
    if problems:
        raise RenderError(f"{label}: refused by the Kubernetes schemas: " + "; ".join(problems[:5]))
