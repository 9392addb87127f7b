"""The comment block over a profile's Kubernetes objects: what an operator applies, and why.

Every row is computed here from the same plan the objects come from (the template only lays
the rows out): the GPUs and their split, where the weights live and who fills them, what each
pod asks of its node and its QoS class, how long the server may take to start, the Secrets.
"""

from __future__ import annotations

import textwrap

from .k8s_pod import PodPlan
from .k8s_resources import QOS, engine_cpu, engine_memory
from .k8s_schema import K8S_VERSION, LWS_VERSION
from .k8s_storage import weights_text

SPEC_PP_NOTE = (
    "speculative decoding is pinned off (SPEC=off): vLLM does not boot it with pipeline "
    "parallelism (vllm-project/vllm#57755)"
)
Row = tuple[str, str]
WIDTH = 88


def _gpus(plan: PodPlan) -> str:
    layout = plan.layout
    text = f"{layout.gpus_per_pod} per pod"
    if layout.multi_node:
        text += (
            f" x {layout.nodes} pods: TP {layout.tp} within a node x PP {layout.pp} across nodes"
        )
    return text


def _resources(plan: PodPlan) -> list[Row]:
    memory = engine_memory(plan.ctx, plan.layout, plan.weights.total_bytes)
    cpu = engine_cpu(plan.ctx, plan.layout)
    return [
        (
            "Resources",
            f"engine {cpu} CPU, {memory.gib}Gi memory ({memory.describe()}), "
            f"{plan.layout.gpus_per_pod} GPU; requests = limits in every container: QoS {QOS}",
        )
    ]


def _startup(plan: PodPlan) -> list[Row]:
    role = "leader" if plan.layout.multi_node else "server"
    rows = [("Startup", f"the {role} may take {plan.startup[role].describe()}")]
    if plan.layout.multi_node:
        rows.append(
            (
                "",
                f"(the pods of a group wait {plan.join_s // 60} min for each other: the leader for "
                "LWS_GROUP_SIZE nodes, the workers for its Ray head; a worker is ready once joined)",
            )
        )
    return rows


def _notes(plan: PodPlan) -> list[str]:
    notes = [SPEC_PP_NOTE] if plan.spec_pinned_off else []
    for key in plan.weights.unlocked:
        notes.append(
            f"{key} is locked from declared facts only: its files are held to the sizes and "
            "hashes the Hub reports (run `profilegen lock` online)"
        )
    kube = plan.ctx.profile.kubernetes
    for mount_id, cluster in (kube.mounts if kube else {}).items():
        mount = plan.ctx.profile.mounts.get(mount_id)
        if cluster.host_type and mount is not None:
            notes.append(
                f"mount {mount_id} is the node's own {mount.host} (hostPath {cluster.host_type}):"
                " every node needs it, and Pod Security baseline refuses the pod"
            )
    if plan.volume.kind == "hostpath":
        notes.append("the weights are a hostPath volume: Pod Security baseline refuses the pod")
    return notes


def header_rows(plan: PodPlan) -> list[Row]:
    secret, name = plan.options.hf_secret, plan.name
    schemas = f"Kubernetes {K8S_VERSION}"
    if plan.layout.multi_node:
        schemas += f", LeaderWorkerSet {LWS_VERSION} CRD (install LWS first)"
    rows: list[Row] = [
        ("Engine", f"{plan.ctx.engine.image_ref} ({plan.ctx.engine.kind})"),
        ("GPUs", _gpus(plan)),
        ("Schemas", schemas),
        ("Tunables", f"edit ConfigMap {name}-tunables (checked at boot, as in the compose file)"),
        (
            "Secrets",
            f"Secret {secret}, optional: HF_TOKEN (the weights loader's only) and API_KEY "
            "(every request must carry it; the serving container's only)",
        ),
        ("", f"kubectl create secret generic {secret} --from-literal=HF_TOKEN=..."),
        ("", "  --from-literal=API_KEY=..."),
        ("Weights", weights_text(plan)),
        *_resources(plan),
        *_startup(plan),
    ]
    rows += [("Note", note) for note in _notes(plan)]
    return [wrapped for row in rows for wrapped in _wrap(row)]


def _wrap(row: Row) -> list[Row]:
    """A row as lines of at most WIDTH characters, the label on the first."""
    label, text = row
    lines = textwrap.wrap(text, WIDTH, break_long_words=False, break_on_hyphens=False)
    return [(label if i == 0 else "", line) for i, line in enumerate(lines or [""])]
