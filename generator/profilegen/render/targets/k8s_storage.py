"""The claims the weights live on, and the Job that fills a shared one.

One node: a ReadWriteOnce claim, which every storage class provides. A LeaderWorkerSet: a
claim per pod (volumeClaimTemplates), each filled by its pod's own loader, again
ReadWriteOnce; or, with `--model-volume shared`, one ReadWriteMany claim on a class that
provides it, filled once by a Job while every pod waits for its marker. The size is the lock's
bytes (else the declared size) plus headroom for the compile caches on the same volume.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...lockfile.lock import LOCK_NAME
from .k8s_plan import labels, metadata
from .k8s_pod import PodPlan, loader_container, scheduling
from .k8s_weights import claim_gib, claim_spec, data_volume

# Restarts of the loader before the Job gives up; each resumes what the last one downloaded.
JOB_BACKOFF = 10


def claim(plan: PodPlan) -> dict[str, Any] | None:
    """The PersistentVolumeClaim object, where the pods share one that profilegen creates."""
    kind = plan.volume.kind
    if kind not in ("new", "shared") or plan.per_pod_claims:
        return None
    access = "ReadWriteMany" if kind == "shared" else "ReadWriteOnce"
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(plan.name, plan.options, "data", "-data"),
        "spec": claim_spec(plan.weights, plan.options, access),
    }


def claim_templates(plan: PodPlan) -> list[dict[str, Any]]:
    """LWS volumeClaimTemplates: a ReadWriteOnce claim of each pod of a group."""
    if not plan.per_pod_claims:
        return []
    spec = claim_spec(plan.weights, plan.options, "ReadWriteOnce")
    return [{"metadata": {"name": "data"}, "spec": spec}]


def loader_job(plan: PodPlan) -> dict[str, Any] | None:
    """`shared`: the Job that downloads and verifies the weights into the shared claim once.

    Named by its plan and pod template: a Job's template cannot change, so a new lock (or
    image) is a new Job, and applying the same bundle again leaves the finished one alone.
    """
    if plan.volume.kind != "shared":
        return None
    template = {
        "metadata": {"labels": labels(plan.name, "weights")},
        "spec": {
            "restartPolicy": "OnFailure",
            "containers": [loader_container(plan, "load")],
            **scheduling(plan.ctx),
            "volumes": [
                data_volume(plan.volume, plan.name),
                {"name": "scripts", "configMap": {"name": f"{plan.name}-entrypoint"}},
            ],
        },
    }
    identity = json.dumps([plan.weights.digest, template], sort_keys=True).encode()
    meta = metadata(plan.name, plan.options, "weights")
    meta["name"] = f"{plan.name}-weights-{hashlib.sha256(identity).hexdigest()[:10]}"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {"backoffLimit": JOB_BACKOFF, "template": template},
    }


def weights_text(plan: PodPlan) -> str:
    """The header's account of where the weights live and who puts them there."""
    volume, name, gib = plan.volume, plan.name, claim_gib(plan.weights)
    klass = plan.options.storage_class or "the cluster's default class"
    if volume.kind == "new" and plan.per_pod_claims:
        where = f"a claim per pod (volumeClaimTemplates: ReadWriteOnce, {gib}Gi, {klass})"
        how = "filled by each pod's init container load-weights"
    elif volume.kind == "new":
        where = f"PersistentVolumeClaim {name}-data (ReadWriteOnce, {gib}Gi, {klass})"
        how = "filled by the init container load-weights"
    elif volume.kind == "shared":
        job = loader_job(plan) or {}
        where = f"PersistentVolumeClaim {name}-data (ReadWriteMany, {gib}Gi, {klass})"
        how = f"filled once by Job {job['metadata']['name']} (each pod's init container wait-for-weights waits for it)"
    elif volume.kind == "claim":
        where, how = f"claim {volume.value}, filled beforehand", "checked by verify-weights"
    else:
        where = f"{volume.value} on every node (hostPath Directory), filled beforehand"
        how = "checked by verify-weights"
    if volume.downloads:
        return (
            f"{where}, folder models/, {how} before the engine starts: the locked revision is "
            "downloaded (resumably) with huggingface_hub, then every file is verified against "
            f"{LOCK_NAME}; only the loader gets the token"
        )
    return (
        f"{where}, folder models/, {how} before the engine starts: every file is verified "
        f"against {LOCK_NAME}, with no network in the pod"
    )
