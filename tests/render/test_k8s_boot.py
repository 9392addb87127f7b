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
from profilegen.render.targets.k8s_patches import CONFIGMAP_BUDGET, SCRIPTS_DIR
from profilegen.render.targets.k8s_plan import K8sError, K8sOptions
from profilegen.render.targets.k8s_schema import schema_problems

from .conftest import (
    FAKE_PATCH_FILES,
    PKG_BEFORE,
    SEED,
    SYSTEM_PATH,
    W4A8_PROFILE,
    BootResult,
    expected_package,
    run_entrypoint,
    snapshot,
    write_tree,
)

PR48375 = "vllm-pr48375-mamba-drop-eagle-block"
WSL_UVA = "vllm-wsl-uva"


def pod(rendered: RenderedK8s, role: str = "server") -> dict[str, Any]:
    for obj in rendered.objects:
        if obj["kind"] == "Deployment":
            return dict(obj["spec"]["template"]["spec"])
        if obj["kind"] == "LeaderWorkerSet":
            return dict(obj["spec"]["leaderWorkerTemplate"][f"{role}Template"]["spec"])
    raise AssertionError("no workload")


def lay_out_configmaps(
    rendered: RenderedK8s, configmaps: list[dict[str, Any]], patch_root: Path, role: str
) -> None:
    """Writes each ConfigMap volume where the kubelet would mount it (items: key -> path)."""
    by_name = {cm["metadata"]["name"]: cm for cm in configmaps}
    spec = pod(rendered, role)
    volumes = {v["name"]: v for v in spec["volumes"]}
    for mount in spec["containers"][0]["volumeMounts"]:
        source = volumes[mount["name"]].get("configMap")
        if not mount["name"].startswith("patch-") or source is None:
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
        "--disable-usage-stats",
    ], result.stderr
    assert snapshot(tmp_path / "pkg") == expected_package(
        [d.patch.id for d in rendered.plan.deliveries]
    )


@pytest.fixture(scope="module")
def large_patch(
    test_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Registry, bytes]:
    """The test registry with one installer padded past what a ConfigMap carries, served
    from a pinned URL instead of the registry."""
    root = tmp_path_factory.mktemp("large") / "root"
    shutil.copytree(test_root / "registry", root / "registry")
    installer = FAKE_PATCH_FILES[PR48375]["install.sh"]
    padded = installer + b"# padding\n" * (CONFIGMAP_BUDGET // 10 + 1)
    digest = hashlib.sha256(padded).hexdigest()
    path = root / "registry" / "patches" / f"{PR48375}.yaml"
    text = path.read_text()
    head, _, _ = text.partition("source:\n")
    tail = text[text.index("\nsteps:") :] if "\nsteps:" in text else "\n"
    path.write_text(
        head
        + "source:\n  kind: remote\n  base_url: https://patches.example.org/pr48375/\n"
        + f"  files:\n    - {{path: install.sh, size: {len(padded)}, sha256: {digest}}}"
        + tail
    )
    shutil.rmtree(root / "registry" / "patches" / "files" / PR48375)
    # And one vendored patch declared just past the budget: no URL to fetch it from.
    vendored = root / "registry" / "patches" / f"{WSL_UVA}.yaml"
    vendored.write_text(
        re.sub(r"size: \d+", f"size: {CONFIGMAP_BUDGET + 1}", vendored.read_text(), count=1)
    )
    return open_registry(root), padded


def run_fetcher(
    rendered: RenderedK8s, workdir: Path, served: dict[str, bytes]
) -> subprocess.CompletedProcess[str]:
    """The init container's script, with a `curl` that serves `served` (URL -> bytes)."""
    stubs, files = workdir / "bin", workdir / "served"
    for url, content in served.items():
        write_tree(files, {hashlib.sha256(url.encode()).hexdigest(): content})
    stubs.mkdir(parents=True)
    (stubs / "curl").write_text(
        "#!/bin/bash\nout=${@: -2:1}; url=${@: -1}\n"
        f'key=$(printf %s "$url" | sha256sum); cp "{files}/${{key%% *}}" "$out"\n'
    )
    (stubs / "curl").chmod(0o755)
    return subprocess.run(
        ["/bin/bash", "-c", rendered.scripts["fetch-patches.sh"]],
        env={"PATH": f"{stubs}:{SYSTEM_PATH}", "PROFILEGEN_FETCH_ROOT": str(workdir / "fetched")},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_a_large_patch_arrives_by_init_container_and_is_verified_twice(
    large_patch: tuple[Registry, bytes], tmp_path: Path
) -> None:
    registry, padded = large_patch
    rendered = render_k8s(registry, registry.profiles[W4A8_PROFILE])
    spec = pod(rendered)
    (init,) = spec["initContainers"]
    assert init["command"] == ["/bin/bash", "-p", "/opt/profilegen/fetch-patches.sh"]
    large = [d for d in rendered.plan.deliveries if d.via == "fetch"]
    assert [d.patch.id for d in large] == [PR48375]
    assert {"name": large[0].volume, "emptyDir": {}} in spec["volumes"]
    url = "https://patches.example.org/pr48375/install.sh"
    # A wrong download is refused and not kept.
    bad = run_fetcher(rendered, tmp_path / "bad", {url: b"echo pwned\n"})
    assert bad.returncode == 1 and "does not match its pinned sha256" in bad.stderr
    assert not list((tmp_path / "bad" / "fetched").rglob("install.sh"))
    fetched = run_fetcher(rendered, tmp_path, {url: padded})
    assert fetched.returncode == 0, fetched.stderr
    # The emptyDir the init container filled is mounted where the compose mounts the patch.
    shutil.copytree(tmp_path / "fetched" / str(large[0].index), tmp_path / "etc" / "pr48375")
    configmaps = [
        d
        for d in YAML(typ="safe").load_all(
            k8s_bundle_files(registry, rendered)["patches.yaml"].decode()
        )
        if d
    ]
    lay_out_configmaps(rendered, configmaps, tmp_path / "etc", "server")
    result = boot(rendered, tmp_path)
    assert result.started, result.stderr
    assert snapshot(tmp_path / "pkg") == expected_package(
        [d.patch.id for d in rendered.plan.deliveries]
    )


def test_a_large_vendored_patch_has_nowhere_to_come_from(
    large_patch: tuple[Registry, bytes],
) -> None:
    registry, _ = large_patch
    with pytest.raises(K8sError) as caught:
        render_k8s(registry, registry.profiles[SEED])
    assert str(caught.value.where).startswith(f"registry/patches/{WSL_UVA}.yaml:")
    assert caught.value.detail == (
        f"patch {WSL_UVA} is {CONFIGMAP_BUDGET + 1} bytes, too large for a ConfigMap, and has "
        "no URL an init container could fetch it from"
    )
