"""The pod of a profile on Kubernetes: the engine container, its environment, volumes, probes.

The container runs the same entrypoint script as the compose service, from a ConfigMap.
Tunables come from a ConfigMap with the compose file's defaults (the script checks them at
boot, as it does under Compose); what the manifest fixes (TP and PP, which must match the GPUs
requested) is set on the container instead. Before it, init containers put the weights on the
volume and verify them (or wait for the Job that does), assemble patch files that span several
ConfigMaps and copy declared tools out of their images: the engine starts only after all of
them succeeded. The API key (from the optional Secret) reaches only the container that serves
the API; the Hugging Face token only the loader that downloads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from ...model.common import EnvFrom
from ...model.profile import Mount
from ..context import Context
from .k8s_patches import SCRIPTS_DIR, Delivery, assembly_plan, patch_mounts, patch_volumes
from .k8s_plan import RAY_NODE_PORT, K8sError, K8sOptions, Layout, ModelVolume
from .k8s_resources import (
    LOADER_RESOURCES,
    PROBE_PERIOD_S,
    Startup,
    engine_cpu,
    engine_memory,
    probes,
    resources,
)
from .k8s_weights import LOADER, LOADER_MODELS, WeightsPlan, data_volume, loader_image, loader_mode
from .k8s_yaml import kube_escape

Role = Literal["server", "leader", "worker"]
# Set by the GPU device plugin for the GPUs it allocated; setting it would expose them all.
DEVICE_PLUGIN_ENV = frozenset({"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"})
PINNED = ("TP", "PP")
SECRET_HOST = "HF_TOKEN"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
TOOLS_DIR = "/profilegen/tools"
LOADER_NAMES = {"load": "load-weights", "verify": "verify-weights", "wait": "wait-for-weights"}


@dataclass(frozen=True)
class PodPlan:
    ctx: Context
    layout: Layout
    options: K8sOptions
    name: str
    deliveries: list[Delivery]
    weights: WeightsPlan
    startup: dict[str, Startup]  # by role: the server's or the leader's probe budget
    join_s: int  # how long the pods of a group wait for each other

    @property
    def spec_pinned_off(self) -> bool:
        """Multi-node pins the drafter off: vLLM cannot boot speculative decoding with PP > 1."""
        return self.layout.multi_node and self.ctx.drafter is not None

    @property
    def volume(self) -> ModelVolume:
        return self.options.volume

    @property
    def per_pod_claims(self) -> bool:
        """Each pod of a group has its own claim (LWS volumeClaimTemplates), filled by its
        own loader."""
        return self.layout.multi_node and self.volume.kind == "new"


def tunables_data(plan: PodPlan) -> dict[str, str]:
    """The tunables ConfigMap: every container setting with the compose file's default."""
    ctx = plan.ctx
    data: dict[str, str] = {}
    for tunable in ctx.container_tunables():
        if tunable.env in PINNED or (plan.spec_pinned_off and tunable.env == "SPEC_N"):
            continue
        data[tunable.env] = tunable.default
    if ctx.drafter is not None and not plan.spec_pinned_off:
        data["SPEC"] = ""
    for name, spec in {**ctx.engine.env, **ctx.profile.env}.items():
        if (
            isinstance(spec, EnvFrom)
            and name not in DEVICE_PLUGIN_ENV
            and SECRET_HOST not in spec.host
        ):
            data.setdefault(name, spec.default)
    return data


def _secret(plan: PodPlan, name: str, key: str) -> dict[str, Any]:
    ref = {"name": plan.options.hf_secret, "key": key, "optional": True}
    return {"name": name, "valueFrom": {"secretKeyRef": ref}}


def container_env(plan: PodPlan, role: Role) -> list[dict[str, Any]]:
    """Variables set on the container (they win over the tunables ConfigMap)."""
    ctx, layout = plan.ctx, plan.layout
    env: list[dict[str, Any]] = []
    pinned = {"TP": layout.tp, "PP": layout.pp}
    for name in PINNED:
        if name in ctx.tunables:
            env.append({"name": name, "value": str(pinned[name])})
    if plan.spec_pinned_off:
        env.append({"name": "SPEC", "value": "off"})
    for name, spec in {**ctx.engine.env, **ctx.profile.env}.items():
        if name in DEVICE_PLUGIN_ENV or spec is None:
            continue
        if isinstance(spec, str):
            env.append({"name": name, "value": kube_escape(spec)})
    # The API key, from the Secret, for the pod that serves the API (absent: none, unless the
    # profile needs one); a worker only joins the leader's Ray cluster and never sees it.
    if role != "worker":
        env.append(_secret(plan, "API_KEY", "API_KEY"))
    return env


def shm_quantity(size: str) -> str:
    """Docker's `16gb` (binary units) as a Kubernetes quantity (`16Gi`)."""
    match = re.fullmatch(r"([0-9]+)([kmg])b?", size)
    if match is None:
        raise K8sError("shm_size", f"{size!r} is not a size")
    return match.group(1) + {"k": "Ki", "m": "Mi", "g": "Gi"}[match.group(2)]


def _where(plan: PodPlan, *node: str) -> Any:
    return plan.ctx.registry.where("profiles", plan.ctx.profile.id, node)


def _sub_path(plan: PodPlan, mount_id: str, host: str) -> str:
    parts = [p for p in PurePosixPath(host).parts if p != "."]
    if host.startswith("~") or ".." in parts:
        where = _where(plan, "mounts", mount_id, "host")
        raise K8sError(where, f"mount {mount_id}: {host!r} means nothing on a cluster node")
    return "/".join(parts)


def _host_mount(
    plan: PodPlan, index: int, mount_id: str, mount: Mount
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """A mount of an absolute host path: copied out of an image, or the node's typed path."""
    kube = plan.ctx.profile.kubernetes
    cluster = kube.mounts.get(mount_id) if kube is not None else None
    volume = f"host-{index}"
    if cluster is None:
        raise K8sError(
            _where(plan, "mounts", mount_id, "host"),
            f"mount {mount_id}: {mount.host} is a path on the host; say how a cluster node "
            f"provides it (kubernetes.mounts.{mount_id}: image and path to copy it out of an "
            "image, or host_type File or Directory for the node's own path)",
        )
    if cluster.host_type is not None:
        source = {"path": mount.host, "type": cluster.host_type}
        return {"name": volume, "hostPath": source}, _mount(volume, mount.container, True), None
    copy = {
        "name": f"copy-{index}",
        "image": cluster.image,
        "imagePullPolicy": "IfNotPresent",
        # Dereferenced (a toolkit folder is often a symlink); a restart replaces the copy.
        "command": ["/bin/sh", "-c", 'rm -rf "$2" && cp -RL "$1" "$2"', "copy"],
        "args": [str(cluster.path), f"{TOOLS_DIR}/{mount_id}"],
        "resources": resources(LOADER_RESOURCES["cpu"], LOADER_RESOURCES["memory"], {}),
        "volumeMounts": [{"name": volume, "mountPath": TOOLS_DIR}],
    }
    engine = _mount(volume, mount.container, mount.readonly, mount_id)
    return {"name": volume, "emptyDir": {}}, engine, copy


def volumes_and_mounts(
    plan: PodPlan,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The pod's volumes, the engine's mounts, and the init containers that fill tool copies."""
    ctx, engine = plan.ctx, plan.ctx.engine
    volumes: list[dict[str, Any]] = []
    if not plan.per_pod_claims:
        volumes.append(data_volume(plan.volume, plan.name))
    mounts = [_mount("data", engine.model_mount, engine.model_mount_readonly, "models")]
    copies = []
    for index, (mount_id, mount) in enumerate(ctx.profile.mounts.items()):
        if mount.host.startswith("/"):
            volume, engine_mount, copy = _host_mount(plan, index, mount_id, mount)
            volumes.append(volume)
            mounts.append(engine_mount)
            copies += [copy] if copy else []
        else:
            sub = _sub_path(plan, mount_id, mount.host)
            mounts.append(_mount("data", mount.container, mount.readonly, sub))
    if engine.ipc_host:
        shm = {"medium": "Memory", "sizeLimit": shm_quantity(ctx.profile.shm_size)}
        volumes.append({"name": "shm", "emptyDir": shm})
        mounts.append({"name": "shm", "mountPath": "/dev/shm"})
    volumes.append({"name": "scripts", "configMap": {"name": f"{plan.name}-entrypoint"}})
    mounts.append({"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True})
    volumes += patch_volumes(plan.deliveries)
    mounts += patch_mounts(plan.deliveries)
    return volumes, mounts, copies


def _mount(volume: str, path: str, read_only: bool, sub_path: str = "") -> dict[str, Any]:
    mount: dict[str, Any] = {"name": volume, "mountPath": path}
    if sub_path:
        mount["subPath"] = sub_path
    mount["readOnly"] = read_only
    return mount


def security(ctx: Context) -> dict[str, Any]:
    gid = ctx.profile.user_gid
    return {} if gid is None else {"securityContext": {"runAsUser": 0, "runAsGroup": gid}}


def loader_container(plan: PodPlan, mode: str) -> dict[str, Any]:
    """Downloads and verifies the weights (`load`), verifies a filled volume (`verify`) or
    waits for the Job that loads them (`wait`); the engine starts only after it succeeded."""
    scripts = {"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True}
    data = _mount("data", LOADER_MODELS, mode == "wait", "models")
    container: dict[str, Any] = {
        "name": LOADER_NAMES[mode],
        "image": loader_image(plan.ctx),
        "imagePullPolicy": "IfNotPresent",
        "command": ["python3", f"{SCRIPTS_DIR}/{LOADER}", mode],
    }
    if mode == "load":
        container["env"] = [_secret(plan, SECRET_HOST, SECRET_HOST)]
    container["resources"] = resources(LOADER_RESOURCES["cpu"], LOADER_RESOURCES["memory"], {})
    container["volumeMounts"] = [scripts, data]
    container.update(security(plan.ctx))
    return container


def worker_readiness() -> dict[str, Any]:
    """Ready once the worker's raylet listens, i.e. it has joined the leader's Ray cluster."""
    check = {"tcpSocket": {"port": RAY_NODE_PORT}, "periodSeconds": PROBE_PERIOD_S}
    return {"readinessProbe": {**check, "failureThreshold": 3}}


def _container(
    plan: PodPlan, role: Role, script: str, mounts: list[dict[str, Any]]
) -> dict[str, Any]:
    ctx, layout = plan.ctx, plan.layout
    gpu = ctx.rig.kubernetes.gpu_resource if ctx.rig.kubernetes else "nvidia.com/gpu"
    memory = engine_memory(ctx, layout, plan.weights.total_bytes)
    container: dict[str, Any] = {
        "name": "engine" if role == "server" else role,
        "image": ctx.engine.image_ref,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/bash", "-p", f"{SCRIPTS_DIR}/{script}"],
        "envFrom": [{"configMapRef": {"name": f"{plan.name}-tunables"}}],
        "env": container_env(plan, role),
        "resources": resources(engine_cpu(ctx, layout), memory.gib, {gpu: layout.gpus_per_pod}),
        "volumeMounts": mounts,
    }
    if role == "worker":
        container.update(worker_readiness())
    else:
        port = {"name": "http", "containerPort": ctx.engine.container_port, "protocol": "TCP"}
        container["ports"] = [port]
        container.update(probes(ctx, plan.startup[role]))
    container.update(security(ctx))
    return container


def scheduling(ctx: Context) -> dict[str, Any]:
    kube = ctx.rig.kubernetes
    if kube is None:
        return {}
    out: dict[str, Any] = {}
    selector = dict(kube.node_selector)
    if kube.gpu_product:
        selector[GPU_PRODUCT_LABEL] = kube.gpu_product
    if selector:
        out["nodeSelector"] = selector
    if kube.tolerations:
        out["tolerations"] = [
            {
                k: v
                for k, v in (
                    ("key", t.key),
                    ("operator", t.operator),
                    ("value", t.value),
                    ("effect", t.effect),
                    ("tolerationSeconds", t.toleration_seconds),
                )
                if v is not None
            }
            for t in kube.tolerations
        ]
    return out


def pod_spec(plan: PodPlan, role: Role, script: str) -> dict[str, Any]:
    volumes, mounts, copies = volumes_and_mounts(plan)
    init = [loader_container(plan, loader_mode(plan.volume))]
    assemble, assemble_mounts = assembly_plan(plan.deliveries)
    if assemble:
        scripts = {"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True}
        init.append(
            {
                "name": "assemble-patches",
                "image": plan.ctx.engine.image_ref,
                "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/bash", "-p", f"{SCRIPTS_DIR}/assemble-patches.sh"],
                "resources": resources(LOADER_RESOURCES["cpu"], LOADER_RESOURCES["memory"], {}),
                "volumeMounts": [scripts, *assemble_mounts],
            }
        )
    spec: dict[str, Any] = {"initContainers": init + copies}
    spec["containers"] = [_container(plan, role, script, mounts)]
    spec.update(scheduling(plan.ctx))
    spec["volumes"] = volumes
    return spec
