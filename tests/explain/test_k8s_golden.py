"""Golden Kubernetes commands: what each pod runs is the compose service's engine command,
plus only the multi-node flags on a LeaderWorkerSet leader.

tests/explain/golden/k8s/<profile>.nodes<N>.json holds the leader's and the worker's
explanation; `make golden` refreshes them after a deliberate change.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from profilegen.explain.core import Explanation, Scenario, explain
from profilegen.explain.k8s import explain_k8s
from profilegen.explain.report import as_json
from profilegen.registry import Registry
from profilegen.render.targets.k8s import render_k8s
from profilegen.render.targets.k8s_plan import K8sOptions
from tests.support.repo import shared_registry

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden" / "k8s"
UPDATE = os.environ.get("PROFILEGEN_UPDATE_GOLDEN") == "1"
MULTI_NODE = "--distributed-executor-backend", "ray"
# What the compose service sets and a pod does not: the device plugin owns GPU visibility,
# and an absent (optional) token Secret leaves the token unset rather than empty.
COMPOSE_ONLY_ENV = {"NVIDIA_VISIBLE_DEVICES", "HUGGING_FACE_HUB_TOKEN"}


@lru_cache(maxsize=1)
def registry() -> Registry:
    return shared_registry()


def k8s_run(profile_id: str, role: str, options: K8sOptions, **env: str) -> Explanation:
    reg = registry()
    profile = reg.profiles[profile_id]
    rendered = render_k8s(reg, profile, options)
    return explain_k8s(reg, profile, rendered, role, Scenario(tuple(env.items())))


def compose_run(profile_id: str, **env: str) -> Explanation:
    reg = registry()
    return explain(reg, reg.profiles[profile_id], Scenario(tuple(env.items())))


def data(e: Explanation) -> dict[str, Any]:
    return {k: v for k, v in as_json(e).items() if k not in ("profile", "scenario")}


@pytest.mark.parametrize(("profile_id", "nodes"), [("qwen38-27b-multi4-fast", 2)])
def test_multi_node_commands_match_golden(profile_id: str, nodes: int) -> None:
    options = K8sOptions(nodes=nodes)
    got = {role: data(k8s_run(profile_id, role, options)) for role in ("leader", "worker")}
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    path = GOLDEN / f"{profile_id}.nodes{nodes}.json"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"{path} is missing: run `make golden`"
    assert text == path.read_text(), (
        f"{profile_id} pods run something else now: review, then `make golden`"
    )


@pytest.mark.parametrize(
    "profile_id",
    [
        # TP 4 on one box -> TP 2 in each of two nodes x PP 2; MTP pinned off.
        "qwen38-27b-multi4-fast",
        # Host mounts, a drafter file check and seven patch steps; TP 2 -> TP 1 x PP 2.
        "qwen38-27b-dual-dflash15-fast",
        # PP is the profile's own tunable (pp: 1): pinned to 2, no flag added.
        "gemma-31b-dual",
    ],
)
def test_leader_runs_the_compose_command_plus_the_multi_node_flags(profile_id: str) -> None:
    profile = registry().profiles[profile_id]
    leader = k8s_run(profile_id, "leader", K8sOptions(nodes=2))
    assert leader.launched, leader.message
    pinned = {"TP": str(profile.envelope.tp // 2)}
    extra: tuple[str, ...] = MULTI_NODE
    if profile.envelope.pp is None:
        extra = ("--pipeline-parallel-size", "2", *extra)
    else:
        pinned["PP"] = "2"
    if profile.drafter is not None:
        pinned["SPEC"] = "off"
    compose = compose_run(profile_id, **pinned)
    assert leader.argv == compose.argv + extra
    assert leader.exe == compose.exe and leader.patches == compose.patches
    worker = k8s_run(profile_id, "worker", K8sOptions(nodes=2))
    assert worker.exe == "ray" and worker.argv[:2] == ("start", "--block")
    # The worker applied the same patches, with the same environment, before joining.
    assert worker.patches == leader.patches
    assert _env(worker) == _env(leader)


def _env(e: Explanation) -> dict[str, str]:
    return {k: v for k, v in e.env.items() if not k.startswith("LWS_")}


@pytest.mark.parametrize(
    "profile_id",
    ["qwen38-27b-dual-fast", "qwen36-27b-dual-eagle3", "llamacpp-gemma-12b-single-q8kxl"],
)
def test_one_node_runs_exactly_the_compose_command(profile_id: str) -> None:
    pod = k8s_run(profile_id, "server", K8sOptions())
    compose = compose_run(profile_id)
    assert pod.launched and (pod.exe, pod.argv, pod.patches) == (
        compose.exe,
        compose.argv,
        compose.patches,
    )
    differs = {k for k in {*pod.env, *compose.env} if pod.env.get(k) != compose.env.get(k)}
    assert differs <= COMPOSE_ONLY_ENV, differs


def test_a_tunable_edited_in_the_configmap_meets_the_same_checks_at_boot() -> None:
    refused = k8s_run("qwen38-27b-dual-fast", "server", K8sOptions(), MAX_NUM_SEQS="two")
    assert (refused.exit_code, refused.message) == (
        1,
        "MAX_NUM_SEQS must be a whole number, got 'two'",
    )
    # The rig's memory guard (a desktop card on WSL2) refuses as it does under Compose.
    guarded = [
        p.id
        for p in registry().concrete_profiles()
        if p.rig == "2x3090-pcie-x16x4-wsl2" and registry().engines[p.engine].kind == "vllm"
    ]
    for profile_id in guarded[:1]:
        pod = k8s_run(profile_id, "server", K8sOptions(), GPU_MEMORY_UTILIZATION="0.95")
        compose = compose_run(profile_id, GPU_MEMORY_UTILIZATION="0.95")
        assert (pod.exit_code, pod.message) == (compose.exit_code, compose.message)
        assert pod.exit_code == 2
    assert guarded
