"""What Kubernetes needs to know: a rig's nodes (GPUs, labels, taints), a profile's host mounts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from .common import Id, PositiveInt, Strict

# A label key: an optional DNS-subdomain prefix and a name of at most 63 characters.
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LabelKey = Annotated[str, StringConstraints(pattern=rf"^({_PREFIX}/)?{_NAME}$", max_length=317)]
LabelValue = Annotated[str, StringConstraints(pattern=rf"^({_NAME})?$", max_length=63)]
# An extended resource a device plugin advertises (nvidia.com/gpu, amd.com/gpu).
ResourceName = Annotated[str, StringConstraints(pattern=rf"^{_PREFIX}/{_NAME}$")]


class Toleration(Strict):
    """A taint the serving pods tolerate (GPU nodes are often tainted for GPU work only)."""

    key: LabelKey | None = None
    operator: Literal["Equal", "Exists"] = "Equal"
    value: LabelValue | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Toleration:
        if self.operator == "Exists" and self.value is not None:
            raise ValueError("value: a toleration with operator Exists takes no value")
        if self.operator == "Equal" and self.key is None:
            raise ValueError("key: a toleration with operator Equal needs a key")
        if self.toleration_seconds is not None and self.effect != "NoExecute":
            raise ValueError("toleration_seconds: only a NoExecute toleration has seconds")
        return self


class RigKubernetes(Strict):
    """Optional: how the rig's GPUs appear in a cluster (`render --target k8s`)."""

    # GPUs one node offers; unset: the whole rig is one node. A profile needing more GPUs
    # than one node has is split over nodes (vLLM: LeaderWorkerSet, TP in a node x PP across).
    gpus_per_node: PositiveInt | None = None
    # The nvidia.com/gpu.product label GPU feature discovery puts on the nodes
    # (e.g. NVIDIA-GeForce-RTX-3090): the pods go only where the envelope was measured.
    gpu_product: LabelValue | None = None
    node_selector: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    tolerations: list[Toleration] = Field(default_factory=list)
    gpu_resource: ResourceName = "nvidia.com/gpu"


def _pinned(ref: str) -> str:
    if ":" not in ref.rsplit("/", 1)[-1] and "@" not in ref:
        raise ValueError(f"{ref} names no tag or digest: pin the image")
    return ref


# A pinned image: a name with a tag, a digest or both (`repo/name:tag`, `...@sha256:...`).
ImageRef = Annotated[
    str,
    StringConstraints(
        pattern=r"^[a-z0-9][a-z0-9._/-]*[a-z0-9](:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
        r"(@sha256:[0-9a-f]{64})?$",
        max_length=300,
    ),
    AfterValidator(_pinned),
]
ImagePath = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_.@+-][A-Za-z0-9_.@+/-]*$")]


class ClusterMount(Strict):
    """How a cluster node provides a mount whose host path is absolute (a tool, headers).

    Either copied out of an image by an init container into a volume of the pod (`image`,
    `path`: no host path at all), or the node's own path, typed (`host_type`: the pod does not
    start unless it is that kind of thing; Pod Security "baseline" refuses host paths).
    """

    image: ImageRef | None = None
    path: ImagePath | None = None
    host_type: Literal["File", "Directory"] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ClusterMount:
        copied = self.image is not None or self.path is not None
        if copied and (self.image is None or self.path is None):
            raise ValueError("image: an image copy needs both image and path")
        if copied == (self.host_type is not None):
            raise ValueError("host_type: give either image and path, or host_type")
        return self


class ProfileKubernetes(Strict):
    """Optional: what a cluster needs beyond the compose file (`render --target k8s`)."""

    # Keyed by the profile's mount id: only mounts of an absolute host path need one.
    mounts: dict[Id, ClusterMount] = Field(default_factory=dict)
