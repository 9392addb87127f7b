"""The Kubernetes target: objects the real API schemas accept, the split over nodes, quoting."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml as pyyaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from profilegen.errors import ProfilegenError, UsageError
from profilegen.model import Rig
from profilegen.model.kubernetes import ClusterMount, ProfileKubernetes
from profilegen.registry import Registry
from profilegen.render.targets import k8s_schema
from profilegen.render.targets.k8s import RenderedK8s, build_k8s, render_k8s
from profilegen.render.targets.k8s_plan import K8sError, K8sOptions
from profilegen.render.targets.k8s_yaml import ANNOTATIONS_LIMIT, applied_size, plain, quote
from tests.support.k8s_vendor import K8S_VERSION, kubernetes_subset
from tests.support.repo import shared_registry

REPO = Path(__file__).resolve().parents[2]
# One of each: vLLM with patches and NVLink detection; host-path mounts and many patches;
# a single-file (chat template) patch and LMCache; SGLang; llama.cpp (no /dev/shm).
SAMPLES = (
    "qwen38-27b-dual-fast",
    "qwen38-27b-dual-dflash15-fast",
    "qwen-27b-dual-lmcache",
    "qwen36-27b-dual-eagle3",
    "llamacpp-gemma-12b-single-q8kxl",
)
TWO_NODES = K8sOptions(nodes=2, namespace="llm", replicas=2)


@lru_cache(maxsize=1)
def registry() -> Registry:
    return shared_registry()


def rendered(profile_id: str, options: K8sOptions | None = None) -> RenderedK8s:
    return render_k8s(registry(), registry().profiles[profile_id], options)


def kind(out: RenderedK8s, name: str) -> dict[str, Any]:
    (obj,) = [o for o in out.objects if o["kind"] == name]
    return obj


@pytest.fixture(scope="module", autouse=True)
def _read_package_schemas_once() -> Any:
    """kubernetes-validate reads its 1.8 MB definitions on every call: once is enough here."""
    with pytest.MonkeyPatch.context() as patch:
        cached = lru_cache(maxsize=None)(kubernetes_validate.utils.schema_contents)
        patch.setattr(kubernetes_validate.utils, "schema_contents", cached)
        yield


def validate_with_package(obj: dict[str, Any]) -> None:
    """kubernetes-validate's own entry point (strict): unknown fields are errors."""
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


# --------------------------------------------------------------------------- the schemas


def test_vendored_kubernetes_schemas_are_the_package_ones() -> None:
    vendored = REPO / "schema" / "kubernetes" / f"kubernetes-v{K8S_VERSION}.json"
    assert json.loads(vendored.read_text()) == kubernetes_subset(), (
        "schema/kubernetes/ differs from kubernetes-validate: python -m tests.support.k8s_vendor"
    )


@pytest.mark.parametrize("profile_id", SAMPLES)
def test_one_node_objects_validate_with_kubernetes_validate(profile_id: str) -> None:
    out = rendered(profile_id)
    kinds = [o["kind"] for o in out.objects]
    assert kinds == ["ConfigMap", "ConfigMap", "PersistentVolumeClaim", "Deployment", "Service"]
    for obj in out.objects:
        validate_with_package(plain(obj))


def test_leader_worker_set_validates_against_the_crd_and_its_pods_against_kubernetes() -> None:
    out = rendered("qwen38-27b-multi4-fast", TWO_NODES)
    (lws,) = [plain(o) for o in out.objects if o["kind"] == "LeaderWorkerSet"]
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert k8s_schema.schema_problems(lws) == []
    for role in ("leaderTemplate", "workerTemplate"):
        template = lws["spec"]["leaderWorkerTemplate"][role]
        pod = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "x"}}
        validate_with_package({**pod, "template": template})
    for obj in out.objects:
        if obj["kind"] != "LeaderWorkerSet":
            validate_with_package(plain(obj))


def test_every_profile_that_splits_over_two_nodes_builds_and_each_kind_validates() -> None:
    """Every vLLM profile with an even TP splits over two nodes; one of each kind (engine,
    patches, drafter, host mounts, group id) is validated in full against the CRD and the
    core schemas. Every profile's one-node objects are validated by `check` (the k8s rule)."""
    reg, kinds = registry(), {}
    for profile in reg.concrete_profiles():
        if reg.engines[profile.engine].kind == "vllm" and profile.envelope.tp % 2 == 0:
            built = build_k8s(reg, profile, K8sOptions(nodes=2))
            absolute = any(m.host.startswith("/") for m in profile.mounts.values())
            kind = (profile.engine, bool(profile.patches), bool(profile.drafter), absolute)
            kinds.setdefault((*kind, profile.user_gid is None), built)
    assert len(kinds) > 5
    for built in kinds.values():
        assert built.schema_problems() == [], built.profile_id


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (
            lambda d: d["spec"].update(replicas="1"),
            "spec.replicas: '1' is not of type 'integer', 'null'",
        ),
        (
            lambda d: d["spec"].update(replicas=1.5),
            "spec.replicas: 1.5 is not of type 'integer', 'null'",
        ),
        (
            lambda d: d["spec"]["template"]["spec"]["containers"][0].update(
                imagePullPolicy=None, cmd=[]
            ),
            "spec.template.spec.containers[0]: Additional properties are not allowed ('cmd' was unexpected)",
        ),
    ],
)
def test_the_schemas_refuse_what_the_api_server_refuses(mutate: Any, problem: str) -> None:
    # The valid shape is validated (and remembered) first: a bad value must still be caught.
    (deployment,) = [plain(o) for o in rendered(SAMPLES[0]).objects if o["kind"] == "Deployment"]
    assert k8s_schema.schema_problems(deployment) == []
    mutate(deployment)
    assert k8s_schema.schema_problems(deployment) == [f"Deployment/qwen38-27b-dual-fast: {problem}"]
    with pytest.raises(kubernetes_validate.ValidationError):
        validate_with_package(deployment)


def test_the_crd_schema_refuses_a_typo_and_an_unknown_policy() -> None:
    lws = plain(kind(rendered("qwen38-27b-multi4-fast", TWO_NODES), "LeaderWorkerSet"))
    template = lws["spec"]["leaderWorkerTemplate"]
    template["restartPolicy"] = "Sometimes"
    template["sizee"] = 2
    found = k8s_schema.schema_problems(lws)
    name = "LeaderWorkerSet/qwen38-27b-multi4-fast: spec.leaderWorkerTemplate"
    assert f"{name}: Additional properties are not allowed ('sizee' was unexpected)" in found
    assert any(p.startswith(f"{name}.restartPolicy: 'Sometimes' is not one of") for p in found)


# --------------------------------------------------------------------------- what is rendered


def test_one_node_pod_gets_gpus_shm_probes_the_script_and_the_tunables() -> None:
    out = rendered("qwen38-27b-dual-fast")
    deployment = kind(out, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (engine,) = pod["containers"]
    # GPUs, and CPU and memory sized from the profile, requests equal to limits.
    assert engine["resources"]["limits"] == {"cpu": "6", "memory": "43Gi", "nvidia.com/gpu": 2}
    assert engine["resources"]["requests"] == engine["resources"]["limits"]
    assert engine["command"] == ["/bin/bash", "-p", "/opt/profilegen/entrypoint.sh"]
    assert {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    # The engine's start and compile steps (30 minutes) plus reading its weights from the
    # volume (the declared 18.23 GiB at 100 MB/s), then every 10 s.
    assert out.plan.weights.total_bytes == 19_574_313_452
    assert engine["startupProbe"]["periodSeconds"] == 10
    assert engine["startupProbe"]["failureThreshold"] == math.ceil((1800 + 196) / 10)
    assert engine["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    # The same script and the same defaults as the compose service.
    compose = registry().profiles["qwen38-27b-dual-fast"]
    from profilegen.render import render_profile

    rendered_compose = render_profile(registry(), compose)
    service = rendered_compose.service
    assert out.scripts["entrypoint.sh"] == rendered_compose.script
    assert out.scripts["helpers.sh"] == rendered_compose.helpers.decode()
    defaults = {
        k: v.text.rsplit(":-", 1)[1].rstrip("}")
        for k, v in service["environment"].items()
        if hasattr(v, "text") and ":-" in v.text
    }
    for name, value in out.tunables.items():
        assert defaults[name] == value, name
    # TP is fixed by the GPUs asked for. Secrets come from the Secret, never inline, each to
    # the one container that uses it: the API key to the engine, the token to the loader.
    env = {e["name"]: e for e in engine["env"]}
    assert env["TP"] == {"name": "TP", "value": "2"} and "TP" not in out.tunables
    assert env["API_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "hf-token",
        "key": "API_KEY",
        "optional": True,
    }
    assert "HUGGING_FACE_HUB_TOKEN" not in env and "HF_TOKEN" not in env
    (loader,) = pod["initContainers"]
    assert loader["env"] == [
        {
            "name": "HF_TOKEN",
            "valueFrom": {
                "secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN", "optional": True}
            },
        }
    ]
    assert "NVIDIA_VISIBLE_DEVICES" not in env and "NVIDIA_VISIBLE_DEVICES" not in out.tunables


def test_two_nodes_split_tp_within_a_node_and_pp_across() -> None:
    out = rendered("qwen38-27b-multi4-fast", TWO_NODES)
    # Each pod has its own claim (volumeClaimTemplates), filled by its own loader.
    assert [o["kind"] for o in out.objects] == [
        "ConfigMap",
        "ConfigMap",
        "LeaderWorkerSet",
        "Service",
    ]
    lws = kind(out, "LeaderWorkerSet")
    assert lws["metadata"]["namespace"] == "llm" and lws["spec"]["replicas"] == 2
    group = lws["spec"]["leaderWorkerTemplate"]
    assert group["size"] == 2 and group["restartPolicy"] == "RecreateGroupOnPodRestart"
    for role in ("leader", "worker"):
        (container,) = group[f"{role}Template"]["spec"]["containers"]
        assert container["resources"]["limits"] == {
            "cpu": "6",
            "memory": "34Gi",
            "nvidia.com/gpu": 2,
        }
        assert {"name": "TP", "value": "2"} in container["env"]
        # vLLM does not boot speculative decoding with pipeline parallelism: pinned off.
        assert {"name": "SPEC", "value": "off"} in container["env"]
    assert "startupProbe" in group["leaderTemplate"]["spec"]["containers"][0]
    assert "ports" not in group["workerTemplate"]["spec"]["containers"][0]
    service = kind(out, "Service")
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "leader"
    (claim,) = group["volumeClaimTemplates"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert "SPEC" not in out.tunables and "SPEC_N" not in out.tunables


@pytest.fixture(scope="module")
def cluster_registry() -> Registry:
    """The registry with a rig of two 4-GPU nodes (multi8-fast's), and multi8-max at TP 4 x
    PP 3 on the 8-GPU box."""
    reg = registry()
    rig = reg.rigs["8x3090-pcie"].model_dump()
    kube = {"gpus_per_node": 4, "gpu_product": "NVIDIA-GeForce-RTX-3090"}
    kube["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    rigs = {
        **reg.rigs,
        "2x4x3090": Rig.model_validate({**rig, "id": "2x4x3090", "kubernetes": kube}),
    }
    fast, most = reg.profiles["qwen38-27b-multi8-fast"], reg.profiles["qwen38-27b-multi8-max"]
    split = most.envelope.model_copy(update={"tp": 4, "pp": 3})
    profiles = {
        **reg.profiles,
        fast.id: fast.model_copy(update={"rig": "2x4x3090"}),
        most.id: most.model_copy(update={"envelope": split}),
    }
    return dataclasses.replace(reg, rigs=rigs, profiles=profiles)


def test_a_rig_of_smaller_nodes_splits_without_being_asked(cluster_registry: Registry) -> None:
    reg = cluster_registry
    out = render_k8s(reg, reg.profiles["qwen38-27b-multi8-fast"])
    assert (out.layout.nodes, out.layout.tp, out.layout.pp) == (2, 4, 2)
    pod = kind(out, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-3090"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    with pytest.raises(K8sError, match="needs 8 GPUs; a node of rig 2x4x3090 has 4"):
        render_k8s(reg, reg.profiles["qwen38-27b-multi8-fast"], K8sOptions(nodes=1))


def test_tp_that_does_not_split_the_kv_heads_per_node_is_refused(
    cluster_registry: Registry,
) -> None:
    # TP 4 x PP 3 = 12 GPUs need two 8-GPU nodes, TP 6 each; Qwen3.8 has 4 KV heads.
    profile = cluster_registry.profiles["qwen38-27b-multi8-max"]
    with pytest.raises(K8sError) as caught:
        render_k8s(cluster_registry, profile)
    assert caught.value.detail == (
        "split over 2 nodes, TP per node is 6, which neither divides nor is a multiple of "
        "the 4 KV heads"
    )
    assert str(caught.value.where).startswith("registry/profiles/qwen38-27b-multi8-max.yaml:")
    # Over three nodes it splits: TP 4 in each, PP 3 across.
    out = render_k8s(cluster_registry, profile, K8sOptions(nodes=3))
    assert (out.layout.nodes, out.layout.tp, out.layout.pp) == (3, 4, 3)


@pytest.mark.parametrize(
    ("profile_id", "options", "message"),
    [
        (
            "qwen38-27b-multi4-fast",
            K8sOptions(nodes=3),
            "registry/profiles/qwen38-27b-multi4-fast.yaml:16: qwen38-27b-multi4-fast's TP x PP "
            "= 4 GPUs do not split evenly over 3 nodes",
        ),
        (
            "llamacpp-gemma-12b-single-q8kxl",
            K8sOptions(nodes=2),
            "registry/profiles/llamacpp-gemma-12b-single-q8kxl.yaml:10: 2 nodes asked for "
            "llamacpp-gemma-12b-single-q8kxl: llama.cpp has no multi-node path here: its RPC "
            "backend (rpc-server on each worker, --rpc on the server) is not modelled, so "
            "profilegen refuses rather than guess; serve it on one node",
        ),
        (
            "qwen36-27b-dual-eagle3",
            K8sOptions(nodes=2),
            "registry/profiles/qwen36-27b-dual-eagle3.yaml:9: 2 nodes asked for "
            "qwen36-27b-dual-eagle3: SGLang's multi-node launch (--nnodes/--node-rank) is not "
            "rendered; serve it on one node",
        ),
        (
            "qwen38-27b-dual-fast",
            K8sOptions(namespace="LLM_Serving"),
            "--namespace: 'LLM_Serving' is not a DNS label (lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters)",
        ),
        (
            "qwen38-27b-dual-fast",
            K8sOptions(model_volume="hostpath:models"),
            "--model-volume: 'models' is not an absolute path on the nodes",
        ),
        (
            "qwen38-27b-dual-fast",
            K8sOptions(replicas=0),
            "--replicas: 0 is not a positive number of replicas",
        ),
        (
            "qwen38-27b-dual-fast",
            K8sOptions(model_volume="nfs"),
            "--model-volume: 'nfs' is not new, shared, claim:NAME or hostpath:PATH",
        ),
        (
            "qwen38-27b-dual-fast",
            K8sOptions(model_volume="shared"),
            "--model-volume: shared is one ReadWriteMany claim for every pod: name a storage "
            "class that provides ReadWriteMany (NFS, CephFS, EFS, Filestore) with "
            "--storage-class",
        ),
        (
            "qwen38-27b-dual-fast",
            K8sOptions(model_volume="claim:models", storage_class="fast"),
            "--storage-class: --model-volume claim:models creates no claim",
        ),
        (
            "qwen38-27b-dual-fast",
            K8sOptions(replicas=2),
            "--replicas: 2 replicas cannot share the ReadWriteOnce claim of --model-volume new: "
            "use --model-volume shared --storage-class NAME (a class that provides "
            "ReadWriteMany), claim:NAME or hostpath:PATH",
        ),
        (
            # The checked-in lock records declared facts only: nothing to verify a filled
            # volume against.
            "qwen38-27b-dual-fast",
            K8sOptions(model_volume="hostpath:/srv/models"),
            "--model-volume: qwen3.8-27b/autoround-int4: profilegen.lock.json records declared "
            "facts only, so a volume filled beforehand cannot be verified (no sha256); run "
            "`profilegen lock` online, or let the pods download the weights (--model-volume new)",
        ),
    ],
)
def test_what_cannot_be_rendered_is_a_located_usage_error(
    profile_id: str, options: K8sOptions, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        rendered(profile_id, options)
    assert str(caught.value) == message
    assert caught.value.exit_code == 2


# --------------------------------------------------------------------------- a first apply


def pods(out: RenderedK8s) -> list[dict[str, Any]]:
    roles = ("leader", "worker") if out.layout.multi_node else ("server",)
    job = [o["spec"]["template"]["spec"] for o in out.objects if o["kind"] == "Job"]
    return [out.pod(role) for role in roles] + job


def test_the_weights_volume_binds_by_topology_and_is_sized_from_the_weights() -> None:
    # One node: ReadWriteOnce, which every class provides, on the class asked for. The
    # declared 19.57 GB x 1.2, and 10 GiB for the compile caches beside them.
    one = rendered("qwen38-27b-dual-fast", K8sOptions(storage_class="local-path"))
    assert kind(one, "PersistentVolumeClaim")["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "32Gi"}},
        "storageClassName": "local-path",
    }
    assert [c["name"] for c in one.pod("server")["initContainers"]] == ["load-weights"]
    # A group: each pod its own ReadWriteOnce claim, filled by its own loader.
    group = rendered("qwen38-27b-multi4-fast", TWO_NODES)
    (template,) = kind(group, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"][
        "volumeClaimTemplates"
    ]
    assert template["metadata"] == {"name": "data"}
    assert template["spec"]["accessModes"] == ["ReadWriteOnce"]
    for spec in pods(group):
        assert spec["initContainers"][0]["name"] == "load-weights"
        assert "data" not in {v["name"] for v in spec["volumes"]}  # the template's claim
    # Or one ReadWriteMany claim on a class that provides it, filled once by a Job.
    shared = rendered(
        "qwen38-27b-multi4-fast", K8sOptions(nodes=2, model_volume="shared", storage_class="nfs")
    )
    claim = kind(shared, "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["spec"]["storageClassName"] == "nfs"
    job = kind(shared, "Job")
    assert job["metadata"]["name"].startswith("qwen38-27b-multi4-fast-weights-")
    assert [c["name"] for c in job["spec"]["template"]["spec"]["containers"]] == ["load-weights"]
    for spec in pods(shared)[:2]:
        assert [c["name"] for c in spec["initContainers"]] == ["wait-for-weights"]
        assert "env" not in spec["initContainers"][0]  # no token: it downloads nothing
        claim_name = {v["name"]: v for v in spec["volumes"]}["data"]["persistentVolumeClaim"]
        assert claim_name == {"claimName": "qwen38-27b-multi4-fast-data"}


def test_a_split_gguf_loads_every_shard_its_first_names() -> None:
    out = rendered("deepseek-flash-dual-iq2")
    weights = json.loads(out.scripts["weights.json"])["artifacts"][0]
    stem = "DeepSeek-V4-Flash-0731-UD-IQ2_XXS"
    assert [f["path"] for f in weights["files"]] == [
        f"{stem}-0000{n}-of-00003.gguf" for n in (1, 2, 3)
    ]
    assert weights["verify"] == "hub"  # the lock names none of them


def test_every_container_asks_for_what_it_may_use_qos_guaranteed() -> None:
    outs = [rendered(p) for p in SAMPLES] + [rendered("qwen38-27b-multi4-fast", TWO_NODES)]
    for out in outs:
        for spec in pods(out):
            for container in [*spec.get("initContainers", []), *spec["containers"]]:
                resources = container["resources"]
                assert resources["requests"] == resources["limits"], container["name"]
                assert {"cpu", "memory"} <= set(resources["limits"]), container["name"]
        assert "requests = limits in every container: QoS Guaranteed" in out.text().replace(
            "\n#            ", " "
        )
    # Offloaded weights take the host memory the profile says they need (86 GB), and the
    # CPU threads it computes them with (8) a core each.
    offload = rendered("deepseek-flash-dual-iq2")
    (engine,) = offload.pod("server")["containers"]
    assert engine["resources"]["limits"] == {"cpu": "9", "memory": "89Gi", "nvidia.com/gpu": 2}
    assert "(offloaded weights 80.1 + runtime 8.0 GiB)" in offload.text()


def test_the_leader_is_not_killed_while_its_group_joins_and_workers_say_when_they_have() -> None:
    out = rendered("qwen38-27b-multi4-fast", TWO_NODES)
    group = kind(out, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    (leader,) = group["leaderTemplate"]["spec"]["containers"]
    join_s, budget = out.plan.join_s, out.plan.startup["leader"]
    # An image pull and the peer's own download of its 18 GiB, within the leader's probe.
    assert join_s == 900 + math.ceil(19_574_313_452 / 25e6)
    startup = leader["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= join_s + 1800 + 98
    assert budget.total_s == join_s + 1800 + math.ceil(19_574_313_452 / 2 / 1e8)
    # The leader waits for LWS_GROUP_SIZE nodes in its Ray cluster, as long as its probe allows.
    leader_sh = out.scripts["leader.sh"]
    assert f"\npg_join_s={join_s}\n" in leader_sh
    assert 'python3 - "$LWS_GROUP_SIZE" "$pg_join_s" >&2' in leader_sh
    (worker,) = group["workerTemplate"]["spec"]["containers"]
    assert worker["readinessProbe"] == {
        "tcpSocket": {"port": 6380},
        "periodSeconds": 10,
        "failureThreshold": 3,
    }
    assert "startupProbe" not in worker and "livenessProbe" not in worker
    assert f"\npg_ray_wait={join_s}\n" in out.scripts["worker.sh"]


def test_host_tools_come_from_an_image_or_a_typed_host_path() -> None:
    seed = registry().profiles["qwen38-27b-dual-dflash15-fast"]
    volumes = {v["name"]: v for v in rendered(seed.id).pod("server")["volumes"]}
    assert volumes["host-0"]["hostPath"] == {"path": "/usr/bin/ninja", "type": "File"}
    assert volumes["host-1"]["hostPath"] == {"path": "/usr/local/cuda/include", "type": "Directory"}
    for profile_id in SAMPLES:  # no host path is ever untyped
        for volume in rendered(profile_id).pod("server")["volumes"]:
            assert "type" in volume.get("hostPath", {"type": None}), profile_id
    image = "ghcr.io/example/cuda-toolchain:13.0"
    copies = ProfileKubernetes(
        mounts={
            "ninja": ClusterMount(image=image, path="/usr/bin/ninja"),
            "include": ClusterMount(image=image, path="/usr/local/cuda/include"),
        }
    )
    out = render_k8s(registry(), seed.model_copy(update={"kubernetes": copies}))
    spec = out.pod("server")
    assert not [v for v in spec["volumes"] if "hostPath" in v]
    copy = spec["initContainers"][1]
    assert (copy["name"], copy["image"], copy["args"]) == (
        "copy-0",
        image,
        ["/usr/bin/ninja", "/profilegen/tools/ninja"],
    )
    mounts = {m["mountPath"]: m for m in spec["containers"][0]["volumeMounts"]}
    assert mounts["/usr/local/bin/ninja"] == {
        "name": "host-0",
        "mountPath": "/usr/local/bin/ninja",
        "subPath": "ninja",
        "readOnly": True,
    }
    with pytest.raises(K8sError) as caught:
        render_k8s(registry(), seed.model_copy(update={"kubernetes": None}))
    assert str(caught.value.where).startswith("registry/profiles/qwen38-27b-dual-dflash15-fast")
    assert caught.value.detail == (
        "mount ninja: /usr/bin/ninja is a path on the host; say how a cluster node provides it "
        "(kubernetes.mounts.ninja: image and path to copy it out of an image, or host_type File "
        "or Directory for the node's own path)"
    )


def test_the_copy_init_container_copies_a_file_or_a_folder_through_symlinks(
    tmp_path: Path,
) -> None:
    seed = registry().profiles["qwen38-27b-dual-dflash15-fast"]
    mount = ClusterMount(image="ghcr.io/example/t:1", path="/usr/local/cuda/include")
    out = render_k8s(
        registry(),
        seed.model_copy(
            update={"kubernetes": ProfileKubernetes(mounts={"ninja": mount, "include": mount})}
        ),
    )
    copy = out.pod("server")["initContainers"][1]
    (tmp_path / "cuda-13.0" / "include").mkdir(parents=True)
    (tmp_path / "cuda-13.0" / "include" / "cuda.h").write_text("#define CUDA 13\n")
    (tmp_path / "cuda").symlink_to(tmp_path / "cuda-13.0")
    (tmp_path / "tools").mkdir()
    for _ in range(2):  # a restarted init container replaces its copy
        argv = [*copy["command"], str(tmp_path / "cuda" / "include"), str(tmp_path / "tools" / "x")]
        subprocess.run(argv, check=True, timeout=10)
    assert (tmp_path / "tools" / "x" / "cuda.h").read_text() == "#define CUDA 13\n"
    assert sorted(p.name for p in (tmp_path / "tools" / "x").iterdir()) == ["cuda.h"]


def test_every_object_fits_what_a_client_side_apply_annotates() -> None:
    for out in [rendered(p) for p in SAMPLES] + [rendered("qwen38-27b-multi4-fast", TWO_NODES)]:
        for obj in out.objects:
            assert applied_size(obj) < ANNOTATIONS_LIMIT / 4, obj["metadata"]["name"]


# --------------------------------------------------------------------------- YAML and quoting


@settings(max_examples=100, deadline=None)
@given(st.text())
@example("A\n")  # a trailing line break must not pass for a plain word
def test_every_string_reads_back_as_itself_in_yaml_1_1_and_1_2(text: str) -> None:
    """Kubernetes reads YAML 1.1 (`on`, `0777`, `1:20` are not strings there); we quote."""
    line = f"k: {quote(text)}\n"
    try:
        want = pyyaml.safe_load(line)["k"]
    except pyyaml.YAMLError:  # PyYAML refuses some characters YAML 1.2 allows
        want = text
    assert want == text
    assert YAML(typ="safe").load(line)["k"] == text


def test_yaml_1_1_keywords_and_numbers_stay_strings() -> None:
    for word in ("on", "No", "y", "0777", "1:20", "1e3", "null", "~", "0x1F", ".inf", "-"):
        assert pyyaml.safe_load(f"k: {quote(word)}")["k"] == word


def test_render_is_deterministic_and_reads_back() -> None:
    first, second = rendered("qwen-27b-dual-lmcache").yaml, rendered("qwen-27b-dual-lmcache").yaml
    assert first == second
    docs = [d for d in YAML(typ="safe").load_all(first.decode()) if d]
    assert docs == [plain(o) for o in rendered("qwen-27b-dual-lmcache").objects]


def test_a_built_profile_is_not_written_before_it_is_rendered() -> None:
    built = build_k8s(registry(), registry().profiles["qwen38-27b-dual-fast"])
    with pytest.raises(ProfilegenError, match="built, not rendered"):
        built.files()
