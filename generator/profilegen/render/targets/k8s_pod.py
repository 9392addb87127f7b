"""The pod of a profile on Kubernetes: the engine container, its environment, volumes, probes.

The container runs the same entrypoint script as the compose service, from a ConfigMap.
Tunables come from a ConfigMap with the compose file's defaults (the script checks them at
boot, as it does under Compose); what the manifest fixes (TP and PP, which must match the GPUs
requested) is set on the container instead. The Hugging Face token comes from a Secret.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from ...model.common import EnvFrom
from ..context import Context
from .k8s_patches import SCRIPTS_DIR, Delivery, fetch_plan, patch_mounts, patch_volumes
from .k8s_plan import K8sError, K8sOptions, Layout
from .k8s_yaml import kube_escape

Role = Literal["server", "leader", "worker"]
# Set by the GPU device plugin for the GPUs it allocated; setting it would expose them all.
DEVICE_PLUGIN_ENV = frozenset({"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"})
PINNED = ("TP", "PP")
SECRET_HOST = "HF_TOKEN"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
PROBE_PERIOD_S = 10


@dataclass(frozen=True)
class PodPlan:
    ctx: Context
    layout: Layout
    options: K8sOptions
    name: str
    deliveries: list[Delivery]

    @property
    def spec_pinned_off(self) -> bool:
        """Multi-node pins the drafter off: vLLM cannot boot speculative decoding with PP > 1."""
        return self.layout.multi_node and self.ctx.drafter is not None


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


def container_env(plan: PodPlan) -> list[dict[str, Any]]:
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
        elif SECRET_HOST in spec.host:
            ref = {"name": plan.options.hf_secret, "key": SECRET_HOST, "optional": True}
            env.append({"name": name, "valueFrom": {"secretKeyRef": ref}})
    # The server's API key, from the same Secret (absent: none, unless the profile needs one).
    ref = {"name": plan.options.hf_secret, "key": "API_KEY", "optional": True}
    env.append({"name": "API_KEY", "valueFrom": {"secretKeyRef": ref}})
    return env


def shm_quantity(size: str) -> str:
    """Docker's `16gb` (binary units) as a Kubernetes quantity (`16Gi`)."""
    match = re.fullmatch(r"([0-9]+)([kmg])b?", size)
    if match is None:
        raise K8sError("shm_size", f"{size!r} is not a size")
    return match.group(1) + {"k": "Ki", "m": "Mi", "g": "Gi"}[match.group(2)]


def _sub_path(plan: PodPlan, mount_id: str, host: str) -> str:
    parts = [p for p in PurePosixPath(host).parts if p != "."]
    if host.startswith("~") or ".." in parts:
        where = plan.ctx.registry.where(
            "profiles", plan.ctx.profile.id, ("mounts", mount_id, "host")
        )
        raise K8sError(where, f"mount {mount_id}: {host!r} means nothing on a cluster node")
    return "/".join(parts)


def volumes_and_mounts(plan: PodPlan) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    ctx, engine = plan.ctx, plan.ctx.engine
    volumes: list[dict[str, Any]] = [_data_volume(plan)]
    mounts = [_mount("data", engine.model_mount, engine.model_mount_readonly, "models")]
    for index, (mount_id, mount) in enumerate(ctx.profile.mounts.items()):
        if mount.host.startswith("/"):
            volume = f"host-{index}"
            volumes.append({"name": volume, "hostPath": {"path": mount.host}})
            mounts.append(_mount(volume, mount.container, mount.readonly))
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
    return volumes, mounts


def _mount(volume: str, path: str, read_only: bool, sub_path: str = "") -> dict[str, Any]:
    mount: dict[str, Any] = {"name": volume, "mountPath": path}
    if sub_path:
        mount["subPath"] = sub_path
    mount["readOnly"] = read_only
    return mount


def _data_volume(plan: PodPlan) -> dict[str, Any]:
    if plan.options.host_data_dir:
        path = {"path": plan.options.host_data_dir, "type": "DirectoryOrCreate"}
        return {"name": "data", "hostPath": path}
    return {"name": "data", "persistentVolumeClaim": {"claimName": f"{plan.name}-data"}}


def probes(ctx: Context) -> dict[str, Any]:
    """Health probes: a start-up budget long enough for a first boot's compilation."""
    check = {"httpGet": {"path": ctx.engine.health_path, "port": "http"}, "timeoutSeconds": 5}
    startup = math.ceil(ctx.engine.startup_budget_s / PROBE_PERIOD_S)
    period = {"periodSeconds": PROBE_PERIOD_S}
    return {
        "startupProbe": {**check, **period, "failureThreshold": startup},
        "readinessProbe": {**check, **period, "failureThreshold": 3},
        "livenessProbe": {**check, "periodSeconds": 30, "failureThreshold": 4},
    }


def _container(
    plan: PodPlan, role: Role, script: str, mounts: list[dict[str, Any]]
) -> dict[str, Any]:
    ctx = plan.ctx
    gpus = {
        ctx.rig.kubernetes.gpu_resource
        if ctx.rig.kubernetes
        else "nvidia.com/gpu": plan.layout.gpus_per_pod
    }
    container: dict[str, Any] = {
        "name": "engine" if role == "server" else role,
        "image": ctx.engine.image_ref,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/bash", "-p", f"{SCRIPTS_DIR}/{script}"],
        "envFrom": [{"configMapRef": {"name": f"{plan.name}-tunables"}}],
        "env": container_env(plan),
        "resources": {"requests": dict(gpus), "limits": dict(gpus)},
        "volumeMounts": mounts,
    }
    if role != "worker":
        port = {"name": "http", "containerPort": ctx.engine.container_port, "protocol": "TCP"}
        container["ports"] = [port]
        container.update(probes(ctx))
    if ctx.profile.user_gid is not None:
        container["securityContext"] = {"runAsUser": 0, "runAsGroup": ctx.profile.user_gid}
    return container


def _scheduling(ctx: Context) -> dict[str, Any]:
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
    volumes, mounts = volumes_and_mounts(plan)
    spec: dict[str, Any] = {}
    fetches, fetch_mounts = fetch_plan(plan.deliveries)
    if fetches:
        scripts = {"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True}
        spec["initContainers"] = [
            {
                "name": "fetch-patches",
                "image": plan.ctx.engine.image_ref,
                "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/bash", "-p", f"{SCRIPTS_DIR}/fetch-patches.sh"],
                "volumeMounts": [scripts, *fetch_mounts],
            }
        ]
    spec["containers"] = [_container(plan, role, script, mounts)]
    spec.update(_scheduling(plan.ctx))
    spec["volumes"] = volumes
    return spec
