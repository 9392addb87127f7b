"""A profile's weights on a cluster: the loader's plan, where the weights live, who loads them.

The plan (`weights.json`) comes from the lock file: for each artifact the profile mounts
(weights, drafter, projector) the repo, the locked commit and every file with its size and
sha256. The loader (`load-weights.py`, rendered from templates/k8s/) downloads exactly those
files with huggingface_hub into the volume, resumably, verifies each against the plan and only
then writes the marker that lets the engine start. An artifact the lock does not vouch for yet
(declared facts only) is held to what the Hub reports for its commit, as `profilegen fetch`
does, and the header says so. A volume filled beforehand (`claim:`, `hostpath:`) is only
verified, with no network in the pod, which takes a resolved lock.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from ...errors import Location
from ...lockfile.artifacts import profile_artifacts, promised_shards
from ...lockfile.lock import LOCK_NAME, Lock, artifact_matches, artifact_problems
from ...units import GIB
from ..context import Context
from .k8s_plan import K8sError, K8sOptions, Layout, ModelVolume

SETTINGS = "registry/settings.yaml"
LOADER = "load-weights.py"
PLAN = "weights.json"
# Where the loader's containers mount the models folder of the data volume.
LOADER_MODELS = "/profilegen/models"
# The claim holds the weights, a fifth more for what a format conversion or a second
# revision needs, and room for the compile caches that share the volume.
HEADROOM = 1.2
CACHE_GIB = 10
MIN_CLAIM_GIB = 20


@dataclass(frozen=True)
class WeightArtifact:
    role: str
    key: str
    repo: str
    revision: str | None
    local_dir: str
    files: tuple[tuple[str, int | None, str | None], ...]  # path, size, sha256; (): whole repo
    locked: bool  # a resolved, current lock entry vouches for the files
    size: int | None  # bytes: the lock's total, else the declared size

    def data(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "role": self.role,
            "repo": self.repo,
            "revision": self.revision,
            "dir": self.local_dir,
            "verify": "lock" if self.locked else "hub",
            "files": [{"path": p, "size": s, "sha256": h} for p, s, h in self.files],
        }


@dataclass(frozen=True)
class WeightsPlan:
    name: str
    profile_id: str
    artifacts: tuple[WeightArtifact, ...]

    @property
    def marker(self) -> str:
        return f".profilegen-loaded-{self.name}.json"

    def text(self) -> str:
        data = {
            "profile": self.profile_id,
            "models": LOADER_MODELS,
            "marker": self.marker,
            "artifacts": [a.data() for a in self.artifacts],
        }
        return json.dumps(data, indent=1, sort_keys=True) + "\n"

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text().encode()).hexdigest()

    @property
    def total_bytes(self) -> int:
        return sum(a.size or 0 for a in self.artifacts)

    @property
    def unlocked(self) -> list[str]:
        return [a.key for a in self.artifacts if not a.locked]


def weights_plan(ctx: Context, name: str, lock: Lock | None) -> WeightsPlan:
    """What the loader downloads and verifies, from the lock where it vouches for the files."""
    out = []
    for role, key, artifact in profile_artifacts(ctx.registry, ctx.profile):
        entry = lock.artifacts.get(key) if lock is not None else None
        locked = (
            entry is not None
            and bool(entry.get("resolved"))
            and artifact_matches(artifact, entry)
            and not artifact_problems(artifact, entry)
        )
        if entry is not None and locked:
            files = tuple((f["path"], f["size"], f.get("sha256")) for f in entry["files"])
            revision, size = entry["commit"], entry["total_size"]
        else:
            files = tuple((p, None, None) for p in artifact.files)
            revision, size = artifact.revision, artifact.size_bytes
        # A split GGUF's first shard names the others: the engine reads them all. Shards the
        # lock does not list are held to what the Hub reports, like the rest of the artifact.
        shards = promised_shards(tuple(p for p, _, _ in files))
        if shards:
            files = tuple((p, None, None) for p in [*(p for p, _, _ in files), *shards])
            locked = False
        out.append(
            WeightArtifact(
                role, key, artifact.repo, revision, artifact.local_dir, files, locked, size
            )
        )
    return WeightsPlan(name, ctx.profile.id, tuple(out))


def check_volume(plan: WeightsPlan, options: K8sOptions, layout: Layout) -> None:
    """Refuses a volume the pods could not use as asked (usage errors, nothing written)."""
    volume = options.volume
    if not volume.downloads and plan.unlocked:
        raise K8sError(
            "--model-volume",
            f"{', '.join(plan.unlocked)}: {LOCK_NAME} records declared facts only, so a volume "
            "filled beforehand cannot be verified (no sha256); run `profilegen lock` online, "
            "or let the pods download the weights (--model-volume new)",
        )
    if volume.kind == "new" and not layout.multi_node and options.replicas > 1:
        raise K8sError(
            "--replicas",
            f"{options.replicas} replicas cannot share the ReadWriteOnce claim of "
            "--model-volume new: use --model-volume shared --storage-class NAME (a class "
            "that provides ReadWriteMany), claim:NAME or hostpath:PATH",
        )


class NoLoaderImage(K8sError):
    """The engine's image cannot run the loader and the registry names no image that can."""

    def __init__(self, engine: str) -> None:
        super().__init__(
            Location(SETTINGS),
            f"engine {engine}'s image has no Python with huggingface_hub to load the weights: "
            "name an image that has (kubernetes.loader_image)",
        )
        self.engine = engine


def loader_image(ctx: Context) -> str:
    """The engine's image where its family ships huggingface_hub, else the registry's."""
    if ctx.family.image_has_hub_client:
        return ctx.engine.image_ref
    image = ctx.registry.settings.kubernetes.loader_image
    if image is None:
        raise NoLoaderImage(ctx.engine.id)
    return image


def claim_gib(plan: WeightsPlan) -> int:
    return max(MIN_CLAIM_GIB, math.ceil(plan.total_bytes * HEADROOM / GIB) + CACHE_GIB)


def claim_spec(plan: WeightsPlan, options: K8sOptions, access: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": [access],
        "resources": {"requests": {"storage": f"{claim_gib(plan)}Gi"}},
    }
    if options.storage_class is not None:
        spec["storageClassName"] = options.storage_class
    return spec


def data_volume(volume: ModelVolume, name: str) -> dict[str, Any]:
    """The pod's `data` volume (LWS per-pod claims come from volumeClaimTemplates instead)."""
    if volume.kind == "hostpath":
        return {"name": "data", "hostPath": {"path": volume.value, "type": "Directory"}}
    claim = volume.value if volume.kind == "claim" else f"{name}-data"
    return {"name": "data", "persistentVolumeClaim": {"claimName": claim}}


def loader_mode(volume: ModelVolume) -> str:
    """What each serving pod's loader container does before the engine starts."""
    return {"new": "load", "shared": "wait", "claim": "verify", "hostpath": "verify"}[volume.kind]
