"""The Kubernetes target: objects the real API schemas accept, the split over nodes, quoting."""

from __future__ import annotations

import dataclasses
import json
import math
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
from profilegen.registry import Registry
from profilegen.render.targets import k8s_schema
from profilegen.render.targets.k8s import RenderedK8s, build_k8s, render_k8s
from profilegen.render.targets.k8s_plan import K8sError, K8sOptions
from profilegen.render.targets.k8s_yaml import plain, quote
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
    ],
)
def test_what_cannot_be_rendered_is_a_located_usage_error(
    profile_id: str, options: K8sOptions, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        rendered(profile_id, options)
    assert str(caught.value) == message
    assert caught.value.exit_code == 2


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
