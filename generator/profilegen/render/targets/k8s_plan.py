"""Where a profile goes on a cluster: the options, names, and the split over nodes.

A profile's envelope needs TP x PP GPUs. On one node that is one pod (a Deployment). When
it needs more GPUs than a node of its rig has (`kubernetes.gpus_per_node`), or `--nodes N`
asks for it, vLLM's documented multi-node path splits the same GPUs as TP within a node x
PP across nodes (a LeaderWorkerSet of N pods joined by Ray). Every refusal names the
profile file and line it comes from, and is a usage error: nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...errors import Location, UsageError, Value
from ..context import Context

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# Object names: a DNS-1035 label short enough for every suffix we add (`-tunables`, and the
# pod names LeaderWorkerSet derives from it).
NAME_LIMIT = 40
RAY_PORT = 6379
# A worker's raylet listens here once it has joined the leader's cluster (its readiness).
RAY_NODE_PORT = 6380


class K8sError(UsageError):
    """A profile cannot be rendered for Kubernetes as asked (exit 2, nothing written)."""

    def __init__(self, where: Location | str, detail: str, follows: tuple[Value, ...] = ()) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where
        self.detail = detail
        # The profile values the refusal follows from (`check` says nothing more where one
        # of them is already reported).
        self.follows = follows


# A storage class or claim name: a DNS subdomain.
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
NODE_PATH = re.compile(r"/[A-Za-z0-9_.@+/-]*")
VOLUME_KINDS = ("new", "shared", "claim", "hostpath")


@dataclass(frozen=True)
class ModelVolume:
    """Where the weights live (`--model-volume`), read from `new`, `shared`, `claim:NAME` or
    `hostpath:PATH`: a claim per pod filled by its own loader, one ReadWriteMany claim filled
    once by a Job, or a volume filled beforehand (verified, never downloaded into)."""

    kind: str
    value: str = ""

    @classmethod
    def parse(cls, text: str) -> ModelVolume:
        kind, _, value = text.partition(":")
        if kind not in VOLUME_KINDS or bool(value) != (kind in ("claim", "hostpath")):
            raise K8sError(
                "--model-volume", f"{text!r} is not new, shared, claim:NAME or hostpath:PATH"
            )
        if kind == "claim" and not DNS_SUBDOMAIN.fullmatch(value):
            raise K8sError("--model-volume", f"claim {value!r} is not a claim name")
        if kind == "hostpath" and not NODE_PATH.fullmatch(value):
            raise K8sError("--model-volume", f"{value!r} is not an absolute path on the nodes")
        return cls(kind, value)

    @property
    def downloads(self) -> bool:
        """The weights are downloaded into it (else only verified: an air-gapped cluster)."""
        return self.kind in ("new", "shared")


MAX_REPLICAS = 2**31 - 1
MAX_NODES = 256


@dataclass(frozen=True)
class K8sOptions:
    namespace: str | None = None
    replicas: int = 1
    nodes: int | None = None  # None: as many as the rig's nodes need
    model_volume: str = "new"
    storage_class: str | None = None
    hf_secret: str = "hf-token"

    @property
    def volume(self) -> ModelVolume:
        return ModelVolume.parse(self.model_volume)

    def check(self) -> None:
        if self.namespace is not None and not DNS_LABEL.fullmatch(self.namespace):
            raise K8sError("--namespace", _not_label(self.namespace))
        if not DNS_LABEL.fullmatch(self.hf_secret):
            raise K8sError("--hf-secret", _not_label(self.hf_secret))
        if self.replicas < 1:
            raise K8sError("--replicas", f"{self.replicas} is not a positive number of replicas")
        if self.nodes is not None and self.nodes < 1:
            raise K8sError("--nodes", f"{self.nodes} is not a positive number of nodes")
        # Kubernetes counts replicas in an int32; no rig splits over more nodes than it has GPUs.
        if self.replicas > MAX_REPLICAS:
            raise K8sError(
                "--replicas", f"{self.replicas} is more than Kubernetes' {MAX_REPLICAS:,}"
            )
        if self.nodes is not None and self.nodes > MAX_NODES:
            raise K8sError("--nodes", f"{self.nodes} is more than the {MAX_NODES} GPUs of any rig")
        volume = self.volume
        klass = self.storage_class
        if klass is not None and not DNS_SUBDOMAIN.fullmatch(klass):
            raise K8sError("--storage-class", f"{klass!r} is not a storage class name")
        if klass is not None and not volume.downloads:
            raise K8sError(
                "--storage-class", f"--model-volume {self.model_volume} creates no claim"
            )
        if volume.kind == "shared" and klass is None:
            raise K8sError(
                "--model-volume",
                "shared is one ReadWriteMany claim for every pod: name a storage class that "
                "provides ReadWriteMany (NFS, CephFS, EFS, Filestore) with --storage-class",
            )


def _not_label(value: str) -> str:
    return (
        f"{value!r} is not a DNS label (lower-case letters, digits and '-', "
        "starting and ending with a letter or digit, at most 63 characters)"
    )


@dataclass(frozen=True)
class Layout:
    """The GPUs of one serving replica: `nodes` pods of TP `tp` each, PP `pp` stages."""

    nodes: int
    tp: int
    pp: int
    gpus_per_pod: int

    @property
    def multi_node(self) -> bool:
        return self.nodes > 1


def object_name(profile_id: str) -> str:
    """A DNS-1035 label for the profile's objects (long ids keep a stable hash suffix)."""
    import hashlib

    name = re.sub(r"[^a-z0-9-]+", "-", profile_id.lower()).strip("-")
    if not name or not name[0].isalpha():
        name = f"p-{name}"
    if len(name) > NAME_LIMIT:
        digest = hashlib.sha256(profile_id.encode()).hexdigest()[:6]
        name = f"{name[: NAME_LIMIT - 7].rstrip('-')}-{digest}"
    return name


def total_gpus(ctx: Context) -> int:
    env = ctx.profile.envelope
    return env.tp * (env.pp or 1)


def _where(ctx: Context, *node: str) -> Location:
    return ctx.registry.where("profiles", ctx.profile.id, tuple(node))


def _parallel(ctx: Context) -> tuple[Value, ...]:
    """The values a split over nodes follows from: TP and PP."""
    return tuple(Value.of_profile(ctx.profile.id, "envelope", n) for n in ("tp", "pp"))


def plan_layout(ctx: Context, options: K8sOptions) -> Layout:
    total = total_gpus(ctx)
    per_node = ctx.rig.gpus_per_node
    nodes = options.nodes
    if nodes is None:
        nodes = -(-total // per_node)
    if nodes == 1:
        if total > per_node:
            raise K8sError(
                _where(ctx, "envelope", "tp"),
                f"{ctx.profile.id} needs {total} GPUs; a node of rig {ctx.rig.id} has {per_node}",
                _parallel(ctx),
            )
        return Layout(1, ctx.profile.envelope.tp, ctx.profile.envelope.pp or 1, total)
    # Nodes worked out from TP x PP (not asked for with --nodes) follow from them.
    _multi_node_engine(ctx, nodes, _parallel(ctx) if options.nodes is None else ())
    if total % nodes:
        raise K8sError(
            _where(ctx, "envelope", "tp"),
            f"{ctx.profile.id}'s TP x PP = {total} GPUs do not split evenly over {nodes} nodes",
            _parallel(ctx),
        )
    tp = total // nodes
    if tp > per_node:
        raise K8sError(
            _where(ctx, "envelope", "tp"),
            f"{nodes} nodes of {tp} GPUs each: a node of rig {ctx.rig.id} has {per_node}",
            _parallel(ctx),
        )
    _check_tp(ctx, tp, nodes)
    return Layout(nodes, tp, nodes, tp)


def _multi_node_engine(ctx: Context, nodes: int, follows: tuple[Value, ...]) -> None:
    why = ctx.family.multinode
    if why is None:
        return
    raise K8sError(
        _where(ctx, "engine"), f"{nodes} nodes asked for {ctx.profile.id}: {why}", follows
    )


def _check_tp(ctx: Context, tp: int, nodes: int) -> None:
    arch = ctx.model.architecture
    where = _where(ctx, "envelope", "tp")
    split = f"split over {nodes} nodes, TP per node is {tp}"
    follows = _parallel(ctx)
    if arch.num_attention_heads % tp:
        raise K8sError(
            where,
            f"{split}, which does not divide the {arch.num_attention_heads} attention "
            f"heads of {ctx.model.id}",
            follows,
        )
    kv = arch.num_kv_heads
    if kv % tp and tp % kv:
        raise K8sError(
            where,
            f"{split}, which neither divides nor is a multiple of the {kv} KV heads",
            follows,
        )
    if nodes > arch.num_layers:
        raise K8sError(where, f"{nodes} pipeline stages for {arch.num_layers} layers", follows)


MANAGED = {"app.kubernetes.io/managed-by": "profilegen"}
SELECTED = ("app.kubernetes.io/name", "app.kubernetes.io/component")


def labels(name: str, component: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/component": component, **MANAGED}


def selector(pod_labels: dict[str, str]) -> dict[str, str]:
    return {k: pod_labels[k] for k in SELECTED}


def metadata(name: str, options: K8sOptions, component: str, suffix: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name + suffix}
    if options.namespace:
        meta["namespace"] = options.namespace
    meta["labels"] = labels(name, component)
    return meta
