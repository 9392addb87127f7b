"""Patch files on a cluster: a ConfigMap per small patch, an init container for larger ones.

Either way the files appear where the compose mounts them (the engine's patch root, or the
single file a chat template is), and the shared entrypoint verifies every file's pinned
sha256 before it applies anything. Which way a patch goes is decided from the sizes the
registry pins, so the objects are the same whether or not the bytes are at hand.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from ..context import Context, RenderError
from ..manifest import ManifestPatch
from .k8s_plan import K8sError
from .k8s_yaml import Block

# File bytes one patch ConfigMap may carry: the API server refuses objects over 1 MiB, and
# binary files grow by a third in base64.
CONFIGMAP_BUDGET = 640 * 1024
SCRIPTS_DIR = "/opt/profilegen"
FETCH_DIR = f"{SCRIPTS_DIR}/fetched"


@dataclass(frozen=True)
class Delivery:
    """How one patch of the manifest reaches the pod."""

    index: int
    patch: ManifestPatch
    via: Literal["configmap", "fetch"]
    configmap: str
    keys: tuple[str, ...]  # the ConfigMap key of each file, in manifest order

    @property
    def volume(self) -> str:
        return f"patch-{self.index}"


def _keys(paths: list[str]) -> tuple[str, ...]:
    """ConfigMap keys (`[-._a-zA-Z0-9]+`) for file paths, distinct and stable."""
    keys: list[str] = []
    for path in paths:
        key = re.sub(r"[^-._a-zA-Z0-9]", "-", path)
        base, n = key, 2
        while key in keys:
            key, n = f"{base}-{n}", n + 1
        keys.append(key)
    return tuple(keys)


def plan_patches(ctx: Context, name: str) -> list[Delivery]:
    out = []
    for index, patch in enumerate(ctx.manifest.patches):
        size = sum(f.size for f in patch.files)
        via: Literal["configmap", "fetch"] = "configmap" if size <= CONFIGMAP_BUDGET else "fetch"
        if via == "fetch" and any(f.url is None for f in patch.files):
            raise K8sError(
                ctx.registry.where("patches", patch.id, ("source", "files")),
                f"patch {patch.id} is {size} bytes, too large for a ConfigMap, and has no "
                "URL an init container could fetch it from",
            )
        configmap = f"{name}-patch-{re.sub(r'[^a-z0-9-]', '-', patch.id)}"
        keys = _keys([f.path for f in patch.files])
        out.append(Delivery(index, patch, via, configmap, keys))
    return out


def patch_volumes(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    volumes: list[dict[str, Any]] = []
    for d in deliveries:
        if d.via == "fetch":
            volumes.append({"name": d.volume, "emptyDir": {}})
            continue
        paths = [
            PurePosixPath(f.path).name if d.patch.mount_file else f.path for f in d.patch.files
        ]
        items = [{"key": k, "path": p} for k, p in zip(d.keys, paths, strict=True)]
        volumes.append({"name": d.volume, "configMap": {"name": d.configmap, "items": items}})
    return volumes


def patch_mounts(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    """The engine container's mounts: each patch where the compose file binds it."""
    mounts = []
    for d in deliveries:
        mount: dict[str, Any] = {"name": d.volume, "mountPath": d.patch.mount_target}
        if d.patch.mount_file:
            mount["subPath"] = PurePosixPath(d.patch.files[0].path).name
        mounts.append({**mount, "readOnly": True})
    return mounts


def fetch_plan(deliveries: list[Delivery]) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """What the init container downloads (url, dest, sha256) and the volumes it writes to."""
    fetches, mounts = [], []
    for d in deliveries:
        if d.via != "fetch":
            continue
        mounts.append({"name": d.volume, "mountPath": f"{FETCH_DIR}/{d.index}"})
        for f in d.patch.files:
            rel = PurePosixPath(f.path).name if d.patch.mount_file else f.path
            # `dest` is relative to the fetch root (FETCH_DIR in the init container).
            fetches.append({"url": str(f.url), "dest": f"{d.index}/{rel}", "sha256": f.sha256})
    return fetches, mounts


def patch_configmaps(
    deliveries: list[Delivery], files: Mapping[str, bytes], metadata: dict[str, Any]
) -> list[dict[str, Any]]:
    """The ConfigMaps of the small patches, from their files (`patches/<id>/<path>` -> bytes)."""
    out = []
    for d in deliveries:
        if d.via != "configmap":
            continue
        data: dict[str, Any] = {}
        binary: dict[str, str] = {}
        for key, f in zip(d.keys, d.patch.files, strict=True):
            content = files.get(f"{d.patch.bundle_dir}/{f.path}")
            if content is None:
                raise RenderError(f"{d.patch.id}/{f.path} was not gathered")
            try:
                data[key] = Block(content.decode("utf-8"))
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(content).decode("ascii")
        meta = {**metadata, "name": d.configmap}
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
        if data:
            obj["data"] = data
        if binary:
            obj["binaryData"] = binary
        out.append(obj)
    return out
