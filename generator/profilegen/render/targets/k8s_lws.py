"""A profile over several nodes: vLLM's multi-node path as a LeaderWorkerSet.

Each group is `nodes` pods: the leader starts the Ray head and `vllm serve` with the
profile's own arguments plus the multi-node ones (pipeline stages across nodes, the Ray
executor); each worker runs the same checks and patches, then joins the leader's Ray
cluster. A pod that restarts recreates its whole group, as a Ray cluster cannot take a
member back mid-flight. The leader waits for the whole group (LWS_GROUP_SIZE) before it
starts serving, within a startup budget that allows for it; workers are ready once joined.
"""

from __future__ import annotations

from typing import Any

from ..context import Context, RenderError
from .k8s_plan import Layout, labels, metadata
from .k8s_pod import PodPlan, Role, pod_spec
from .k8s_schema import LWS_API
from .k8s_storage import claim_templates


def multinode_args(ctx: Context, layout: Layout) -> list[str]:
    """What the leader adds to the engine's arguments (TP and PP themselves are pinned)."""
    if "TP" not in ctx.tunables:
        raise RenderError(f"{ctx.engine.id}: no TP tunable, the tensor-parallel size cannot move")
    args = [] if "PP" in ctx.tunables else ["--pipeline-parallel-size", str(layout.pp)]
    return [*args, "--distributed-executor-backend", "ray"]


def _template(plan: PodPlan, role: Role, script: str, config: str) -> dict[str, Any]:
    meta = {
        "labels": labels(plan.name, role),
        "annotations": {"profilegen.io/config-sha256": config},
    }
    return {"metadata": meta, "spec": pod_spec(plan, role, script)}


def leader_worker_set(plan: PodPlan, annotations: dict[str, str], config: str) -> dict[str, Any]:
    group: dict[str, Any] = {
        "size": plan.layout.nodes,
        "restartPolicy": "RecreateGroupOnPodRestart",
        "leaderTemplate": _template(plan, "leader", "leader.sh", config),
        "workerTemplate": _template(plan, "worker", "worker.sh", config),
    }
    templates = claim_templates(plan)
    if templates:
        # Each pod's own claim, kept when the group is recreated: a loader resumes into it.
        group["volumeClaimTemplates"] = templates
    return {
        "apiVersion": LWS_API,
        "kind": "LeaderWorkerSet",
        "metadata": {**metadata(plan.name, plan.options, "server"), "annotations": annotations},
        "spec": {
            "replicas": plan.options.replicas,
            # The leader cannot become ready before its workers have joined: create all at once.
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": group,
        },
    }
