"""Patch files on a cluster: ConfigMaps that `kubectl apply` takes, and no network in the pod.

A patch whose files fit one ConfigMap is mounted from it where the compose mounts the patch
(the engine's patch root, or the single file a chat template is). A larger one is cut into
parts spread over several ConfigMaps, and an init container joins them into a volume mounted
at the same place. Each ConfigMap stays small enough for a client-side `kubectl apply`, which
copies the whole object into an annotation limited to 256 KiB, so nothing is downloaded in
the pod: an air-gapped cluster takes the bundle as it is. Either way the shared entrypoint
verifies every file's pinned sha256 before it applies anything. How a patch is cut is decided
from the sizes the registry pins, so the objects are the same whether or not the bytes are at
hand.
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
from .k8s_yaml import Block

# File bytes one patch ConfigMap carries: JSON escaping can double text and base64 grows
# binary by a third, and the object must stay under the 256 KiB of annotations a client-side
# apply writes (kubectl.kubernetes.io/last-applied-configuration holds all of it).
CONFIGMAP_BUDGET = 96 * 1024
APPLY_LIMIT = 256 * 1024
SCRIPTS_DIR = "/opt/profilegen"
PARTS_DIR = f"{SCRIPTS_DIR}/parts"
JOINED_DIR = f"{SCRIPTS_DIR}/joined"


@dataclass(frozen=True)
class Part:
    """Bytes [start, end) of one patch file, carried by one ConfigMap under one key."""

    configmap: str
    key: str
    start: int
    end: int


@dataclass(frozen=True)
class Delivery:
    """How one patch of the manifest reaches the pod."""

    index: int
    patch: ManifestPatch
    via: Literal["configmap", "assemble"]
    configmap: str  # the patch's ConfigMap (assemble: the prefix of its parts' ConfigMaps)
    keys: tuple[str, ...]  # the ConfigMap key of each file, in manifest order
    parts: tuple[tuple[Part, ...], ...] = ()  # assemble: each file's parts, in order

    @property
    def volume(self) -> str:
        return f"patch-{self.index}"

    @property
    def part_configmaps(self) -> list[str]:
        return sorted({p.configmap for parts in self.parts for p in parts})

    def paths(self) -> list[str]:
        """Each file's path under the mount (a mounted single file: its name)."""
        return [
            PurePosixPath(f.path).name if self.patch.mount_file else f.path
            for f in self.patch.files
        ]


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


def _cut(prefix: str, keys: tuple[str, ...], sizes: list[int]) -> tuple[tuple[Part, ...], ...]:
    """Parts of at most the budget, packed in order into ConfigMaps of at most the budget."""
    out: list[tuple[Part, ...]] = []
    number, used = 1, 0
    for key, size in zip(keys, sizes, strict=True):
        parts = []
        for index, start in enumerate(range(0, max(size, 1), CONFIGMAP_BUDGET)):
            end = min(size, start + CONFIGMAP_BUDGET)
            if used and used + end - start > CONFIGMAP_BUDGET:
                number, used = number + 1, 0
            parts.append(Part(f"{prefix}-{number}", f"{key}.{index}", start, end))
            used += end - start
        out.append(tuple(parts))
    return tuple(out)


def plan_patches(ctx: Context, name: str) -> list[Delivery]:
    out = []
    for index, patch in enumerate(ctx.manifest.patches):
        sizes = [f.size for f in patch.files]
        configmap = f"{name}-patch-{re.sub(r'[^a-z0-9-]', '-', patch.id)}"
        keys = _keys([f.path for f in patch.files])
        if sum(sizes) <= CONFIGMAP_BUDGET:
            out.append(Delivery(index, patch, "configmap", configmap, keys))
        else:
            parts = _cut(configmap, keys, sizes)
            out.append(Delivery(index, patch, "assemble", configmap, keys, parts))
    return out


def patch_volumes(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    volumes: list[dict[str, Any]] = []
    for d in deliveries:
        if d.via == "assemble":
            volumes.append({"name": d.volume, "emptyDir": {}})
            for number, configmap in enumerate(d.part_configmaps, 1):
                source = {"name": configmap}
                volumes.append({"name": f"{d.volume}-part-{number}", "configMap": source})
            continue
        items = [{"key": k, "path": p} for k, p in zip(d.keys, d.paths(), strict=True)]
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


def assembly_plan(
    deliveries: list[Delivery],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What the init container joins (dest, parts, sha256) and the volumes it reads and
    writes; paths are relative to the parts and joined roots (PARTS_DIR, JOINED_DIR)."""
    files: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for d in deliveries:
        if d.via != "assemble":
            continue
        mounts.append({"name": d.volume, "mountPath": f"{JOINED_DIR}/{d.index}"})
        numbers = {cm: n for n, cm in enumerate(d.part_configmaps, 1)}
        for number in numbers.values():
            path = f"{PARTS_DIR}/{d.index}/{number}"
            mounts.append(
                {"name": f"{d.volume}-part-{number}", "mountPath": path, "readOnly": True}
            )
        for f, rel, parts in zip(d.patch.files, d.paths(), d.parts, strict=True):
            sources = [f"{d.index}/{numbers[p.configmap]}/{p.key}" for p in parts]
            files.append({"dest": f"{d.index}/{rel}", "parts": sources, "sha256": f.sha256})
    return files, mounts


def _data(entries: Mapping[str, bytes]) -> dict[str, Any]:
    """A ConfigMap's `data` (text, as literal blocks) and `binaryData` (base64)."""
    data: dict[str, Any] = {}
    binary: dict[str, str] = {}
    for key, content in entries.items():
        try:
            data[key] = Block(content.decode("utf-8"))
        except UnicodeDecodeError:
            binary[key] = base64.b64encode(content).decode("ascii")
    out: dict[str, Any] = {}
    if data:
        out["data"] = data
    if binary:
        out["binaryData"] = binary
    return out


def patch_configmaps(
    deliveries: list[Delivery], files: Mapping[str, bytes], metadata: dict[str, Any]
) -> list[dict[str, Any]]:
    """The patches' ConfigMaps, from their files (`patches/<id>/<path>` -> bytes)."""
    contents: dict[str, dict[str, bytes]] = {}
    for d in deliveries:
        for index, (key, f) in enumerate(zip(d.keys, d.patch.files, strict=True)):
            content = files.get(f"{d.patch.bundle_dir}/{f.path}")
            if content is None:
                raise RenderError(f"{d.patch.id}/{f.path} was not gathered")
            if d.via == "configmap":
                contents.setdefault(d.configmap, {})[key] = content
                continue
            for part in d.parts[index]:
                contents.setdefault(part.configmap, {})[part.key] = content[part.start : part.end]
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {**metadata, "name": name},
            **_data(entries),
        }
        for name, entries in contents.items()
    ]
