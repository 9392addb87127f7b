"""Kubernetes pods booted for real on the fake vLLM package: the patches arrive (ConfigMaps,
or an init container for large files), are verified against their sha256 and applied."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from ruamel.yaml import YAML

from profilegen.registry import Registry, open_registry
from profilegen.render.bundle import k8s_bundle_files
from profilegen.render.targets.k8s import RenderedK8s, render_k8s
from profilegen.render.targets.k8s_patches import CONFIGMAP_BUDGET, PARTS_DIR, SCRIPTS_DIR
from profilegen.render.targets.k8s_plan import K8sOptions
from profilegen.render.targets.k8s_schema import schema_problems
from profilegen.render.targets.k8s_yaml import ANNOTATIONS_LIMIT, applied_size

from .conftest import (
    FAKE_PATCH_FILES,
    PKG_BEFORE,
    RECORDS,
    SYSTEM_PATH,
    W4A8_PROFILE,
    BootResult,
    expected_package,
    run_entrypoint,
    snapshot,
    write_tree,
)

PR48375 = "vllm-pr48375-mamba-drop-eagle-block"


def pod(rendered: RenderedK8s, role: str = "server") -> dict[str, Any]:
    return rendered.pod(role)


def lay_out_configmaps(
    rendered: RenderedK8s, configmaps: list[dict[str, Any]], patch_root: Path, role: str
) -> None:
    """Writes each ConfigMap volume where the kubelet would mount it (items: key -> path)."""
    by_name = {cm["metadata"]["name"]: cm for cm in configmaps}
    spec = pod(rendered, role)
    volumes = {v["name"]: v for v in spec["volumes"]}
    for mount in spec["containers"][0]["volumeMounts"]:
        if not mount["name"].startswith("patch-"):
            continue
        source = volumes[mount["name"]].get("configMap")
        if source is None:
            continue
        data = by_name[source["name"]]["data"]
        place = patch_root / PurePosixPath(mount["mountPath"]).name
        for item in source["items"]:
            if "subPath" in mount:  # one file mounted at the path itself
                if item["path"] == mount["subPath"]:
                    write_tree(patch_root, {place.name: data[item["key"]]})
            else:
                write_tree(place, {item["path"]: data[item["key"]]})


def boot(
    rendered: RenderedK8s, workdir: Path, role: str = "server", env: dict[str, str] | None = None
) -> BootResult:
    """The role's container booted in a box laid out as the pod: the scripts ConfigMap at its
    mount, each patch volume (laid out under workdir/etc/) at its mount path."""
    container = pod(rendered, role)["containers"][0]
    environment: dict[str, Any] = dict(rendered.tunables)
    environment.update({e["name"]: e["value"] for e in container["env"] if "value" in e})
    environment.update(env or {})
    write_tree(workdir / "scripts", dict(rendered.scripts))
    if not (workdir / "pkg").is_dir():
        write_tree(workdir / "pkg", PKG_BEFORE)
    volumes = [{"type": "bind", "source": str(workdir / "scripts"), "target": SCRIPTS_DIR}]
    for mount in container["volumeMounts"]:
        source = workdir / "etc" / PurePosixPath(mount["mountPath"]).name
        if mount["name"].startswith("patch-") and source.exists():
            volumes.append({"type": "bind", "source": str(source), "target": mount["mountPath"]})
    service = {"environment": environment, "entrypoint": container["command"], "volumes": volumes}
    return run_entrypoint(service, workdir=workdir, pkg=workdir / "pkg", topo=None)


@pytest.fixture(scope="module")
def w4a8_bundle(test_registry: Registry) -> tuple[RenderedK8s, list[dict[str, Any]]]:
    rendered = render_k8s(test_registry, test_registry.profiles[W4A8_PROFILE])
    files = k8s_bundle_files(test_registry, rendered)
    configmaps = [d for d in YAML(typ="safe").load_all(files["patches.yaml"].decode()) if d]
    return rendered, configmaps


def test_patch_configmaps_validate_and_carry_the_pinned_files(
    w4a8_bundle: tuple[RenderedK8s, list[dict[str, Any]]],
) -> None:
    rendered, configmaps = w4a8_bundle
    assert [cm["metadata"]["name"] for cm in configmaps] == [
        f"qwen38-27b-dual-fast-patch-{d.patch.id}" for d in rendered.plan.deliveries
    ]
    for cm in configmaps:
        assert schema_problems(cm) == []
    for delivery, cm in zip(rendered.plan.deliveries, configmaps, strict=True):
        for key, f in zip(delivery.keys, delivery.patch.files, strict=True):
            assert hashlib.sha256(cm["data"][key].encode()).hexdigest() == f.sha256


def test_the_pod_verifies_and_applies_its_configmap_patches(
    w4a8_bundle: tuple[RenderedK8s, list[dict[str, Any]]], tmp_path: Path
) -> None:
    rendered, configmaps = w4a8_bundle
    lay_out_configmaps(rendered, configmaps, tmp_path / "etc", "server")
    result = boot(rendered, tmp_path)
    assert result.started, result.stderr
    patched = [d.patch.id for d in rendered.plan.deliveries]
    assert snapshot(tmp_path / "pkg") == expected_package(patched)
    assert result.engine_env is not None and result.engine_env["TP"] == "2"


def test_a_tampered_configmap_refuses_the_boot(
    w4a8_bundle: tuple[RenderedK8s, list[dict[str, Any]]], tmp_path: Path
) -> None:
    rendered, configmaps = w4a8_bundle
    lay_out_configmaps(rendered, configmaps, tmp_path / "etc", "server")
    (tmp_path / "etc" / "pr48375" / "install.sh").write_text("echo pwned\n")
    result = boot(rendered, tmp_path)
    assert not result.started and result.returncode == 1
    assert "patch file pr48375/install.sh does not match its pinned sha256" in result.stderr
    assert snapshot(tmp_path / "pkg") == expected_package([])


def test_each_node_of_a_group_patches_itself_before_joining(
    test_registry: Registry, tmp_path: Path
) -> None:
    rendered = render_k8s(test_registry, test_registry.profiles[W4A8_PROFILE], K8sOptions(nodes=2))
    configmaps = k8s_bundle_files(test_registry, rendered)["patches.yaml"].decode()
    loaded = [d for d in YAML(typ="safe").load_all(configmaps) if d]
    lay_out_configmaps(rendered, loaded, tmp_path / "etc", "worker")
    result = boot(rendered, tmp_path, "worker", {"LWS_LEADER_ADDRESS": "group-0.group"})
    assert result.argv == [
        "start",
        "--block",
        "--address=group-0.group:6379",
        "--node-manager-port=6380",
        "--disable-usage-stats",
    ], result.stderr
    assert snapshot(tmp_path / "pkg") == expected_package(
        [d.patch.id for d in rendered.plan.deliveries]
    )


@pytest.fixture(scope="module")
def large_patch(
    test_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Registry, bytes]:
    """The test registry with one installer padded past what a ConfigMap carries."""
    root = tmp_path_factory.mktemp("large") / "root"
    shutil.copytree(test_root / "registry", root / "registry")
    installer = FAKE_PATCH_FILES[PR48375]["install.sh"]
    padded = installer + b"# padding\n" * (2 * CONFIGMAP_BUDGET // 10 + 1)
    folder = root / "registry" / "patches" / "files" / PR48375
    (folder / "install.sh").write_bytes(padded)
    path = root / "registry" / "patches" / f"{PR48375}.yaml"
    text = re.sub(
        r"(install\.sh, size: )\d+(, sha256: )[0-9a-f]{64}",
        rf"\g<1>{len(padded)}\g<2>{hashlib.sha256(padded).hexdigest()}",
        path.read_text(),
    )
    assert str(len(padded)) in text
    path.write_text(text)
    return open_registry(root), padded


def run_assembler(rendered: RenderedK8s, workdir: Path, configmaps: list[dict[str, Any]]) -> Any:
    """The init container's script, its part ConfigMaps laid out as the kubelet mounts them."""
    spec = pod(rendered)
    (init,) = [c for c in spec["initContainers"] if c["name"] == "assemble-patches"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    by_name = {cm["metadata"]["name"]: cm for cm in configmaps}
    for mount in init["volumeMounts"]:
        source = volumes[mount["name"]].get("configMap")
        if source is None or mount["name"] == "scripts":
            continue
        place = workdir / "parts" / PurePosixPath(mount["mountPath"]).relative_to(PARTS_DIR)
        write_tree(place, dict(by_name[source["name"]]["data"]))
    return subprocess.run(
        ["/bin/bash", "-c", rendered.scripts["assemble-patches.sh"]],
        env={
            "PATH": SYSTEM_PATH,
            "PROFILEGEN_PARTS_ROOT": str(workdir / "parts"),
            "PROFILEGEN_JOINED_ROOT": str(workdir / "joined"),
        },
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_a_large_patch_arrives_in_parts_joined_and_verified_twice(
    large_patch: tuple[Registry, bytes], tmp_path: Path
) -> None:
    registry, padded = large_patch
    rendered = render_k8s(registry, registry.profiles[W4A8_PROFILE])
    (large,) = [d for d in rendered.plan.deliveries if d.via == "assemble"]
    assert large.patch.id == PR48375 and len(large.part_configmaps) == 3
    spec = pod(rendered)
    assert {"name": large.volume, "emptyDir": {}} in spec["volumes"]
    bundle = k8s_bundle_files(registry, rendered)
    configmaps = [d for d in YAML(typ="safe").load_all(bundle["patches.yaml"].decode()) if d]
    # Every ConfigMap stays under what a client-side `kubectl apply` can annotate.
    assert all(applied_size(cm) < ANNOTATIONS_LIMIT for cm in configmaps)
    # A tampered part is refused and nothing is kept.
    tampered = [dict(cm, data=dict(cm["data"])) for cm in configmaps]
    part = next(cm for cm in tampered if cm["metadata"]["name"] == large.part_configmaps[1])
    key = next(iter(part["data"]))
    part["data"][key] = part["data"][key].replace("padding", "pwned!!")
    bad = run_assembler(rendered, tmp_path / "bad", tampered)
    assert bad.returncode == 1 and "does not match its pinned sha256" in bad.stderr
    assert not list((tmp_path / "bad" / "joined").rglob("install.sh*"))
    joined = run_assembler(rendered, tmp_path, configmaps)
    assert joined.returncode == 0, joined.stderr
    assert (tmp_path / "joined" / str(large.index) / "install.sh").read_bytes() == padded
    # The emptyDir the init container filled is mounted where the compose mounts the patch.
    shutil.copytree(tmp_path / "joined" / str(large.index), tmp_path / "etc" / "pr48375")
    lay_out_configmaps(rendered, configmaps, tmp_path / "etc", "server")
    result = boot(rendered, tmp_path)
    assert result.started, result.stderr
    assert snapshot(tmp_path / "pkg") == expected_package(
        [d.patch.id for d in rendered.plan.deliveries]
    )


def process_env(result: BootResult, name: str) -> dict[str, str]:
    """The environment a stub process (ray, python3, vllm) was started with."""
    pairs = (result.workdir / f"env.{name}").read_bytes().decode().split("\0")[:-1]
    return dict(pair.split("=", 1) for pair in pairs)


def test_the_api_key_reaches_the_engine_alone_never_ray(
    test_registry: Registry, tmp_path: Path
) -> None:
    rendered = render_k8s(test_registry, test_registry.profiles[W4A8_PROFILE], K8sOptions(nodes=2))
    bundle = k8s_bundle_files(test_registry, rendered)["patches.yaml"].decode()
    configmaps = [d for d in YAML(typ="safe").load_all(bundle) if d]
    # Only the serving container is given the Secret's key.
    assert "API_KEY" in {e["name"] for e in rendered.container_env("leader")}
    assert "API_KEY" not in {e["name"] for e in rendered.container_env("worker")}
    leader_dir = tmp_path / "leader"
    lay_out_configmaps(rendered, configmaps, leader_dir / "etc", "leader")
    # vLLM's config folder (its default is under the home, read-only in the box): the test's.
    env = {"LWS_GROUP_SIZE": "2", "API_KEY": "s3cret", "VLLM_CONFIG_ROOT": f"{RECORDS}/vllm"}
    leader = boot(rendered, leader_dir, "leader", env)
    assert leader.started, leader.stderr
    for helper in ("ray", "python3"):  # the Ray head, and the wait for the group's nodes
        assert not {"API_KEY", "VLLM_API_KEY"} & set(process_env(leader, helper)), helper
    engine = process_env(leader, "vllm")
    assert engine["VLLM_API_KEY"] == "s3cret" and "API_KEY" not in engine
    # vLLM copies VLLM_* variables to its Ray workers unless this file names them.
    noncarry = leader_dir / "vllm" / "ray_non_carry_over_env_vars.json"
    assert noncarry.read_text() == '["VLLM_API_KEY"]\n'
    # A worker given a key anyway (by hand) drops it before joining.
    worker_dir = tmp_path / "worker"
    lay_out_configmaps(rendered, configmaps, worker_dir / "etc", "worker")
    env = {"LWS_LEADER_ADDRESS": "group-0.group", "API_KEY": "s3cret"}
    worker = boot(rendered, worker_dir, "worker", env)
    assert worker.started, worker.stderr
    assert not {"API_KEY", "VLLM_API_KEY"} & set(process_env(worker, "ray"))


def test_a_leader_without_its_group_size_refuses_to_start(
    test_registry: Registry, tmp_path: Path
) -> None:
    rendered = render_k8s(test_registry, test_registry.profiles[W4A8_PROFILE], K8sOptions(nodes=2))
    bundle = k8s_bundle_files(test_registry, rendered)["patches.yaml"].decode()
    configmaps = [d for d in YAML(typ="safe").load_all(bundle) if d]
    lay_out_configmaps(rendered, configmaps, tmp_path / "etc", "leader")
    result = boot(rendered, tmp_path, "leader")
    assert (result.started, result.returncode) == (False, 1)
    assert result.stderr.splitlines()[-1] == (
        "profilegen: LWS_GROUP_SIZE is not set: this script runs as a LeaderWorkerSet leader"
    )
