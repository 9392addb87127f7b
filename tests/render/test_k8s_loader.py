"""The weights loader a pod runs before its engine, run for real: the generated script, the
installed huggingface_hub and the fake Hub (a real HTTP server) filling a temporary folder."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from profilegen.explain.core import Scenario
from profilegen.explain.k8s import explain_k8s
from profilegen.lockfile.lock import LOCK_NAME
from profilegen.registry import Registry, open_registry
from profilegen.render.targets.k8s import RenderedK8s, render_k8s
from profilegen.render.targets.k8s_patches import SCRIPTS_DIR
from profilegen.render.targets.k8s_plan import K8sOptions
from profilegen.render.targets.k8s_weights import LOADER, PLAN
from tests.support.base import BASE
from tests.support.fakehub import FakeHub, FakeRepo

pytestmark = pytest.mark.usefixtures("isolated_hub_env")

WEIGHTS, DRAFTER = "example/Tiny-7B", "example/Tiny-7B-Eagle3"
# Past huggingface_hub's 10 MiB write chunk, so that a transfer cut after 11 MiB has written
# something to take up again.
SHARD = bytes(range(256)) * (12 * 4096)
CUT = 11 * 2**20
DRAFT = b"\x07" * 2048


def repos(hub: FakeHub, shard: bytes = SHARD) -> tuple[FakeRepo, FakeRepo]:
    weights = hub.add_repo(
        WEIGHTS,
        {"config.json": b'{"model_type": "tiny"}', "model.safetensors": shard},
        lfs={"model.safetensors"},
    )
    drafter = hub.add_repo(
        DRAFTER,
        {"config.json": b'{"model_type": "eagle"}', "model.safetensors": DRAFT},
        lfs={"model.safetensors"},
    )
    return weights, drafter


def registry_for(root: Path, weights: FakeRepo, drafter: FakeRepo, locked: bytes) -> Registry:
    """The base registry pinned to the fake repos' commits; the lock vouches for the weights
    (as if `locked` were their shard) and records declared facts only for the drafter."""
    shutil.copytree(BASE / "registry", root / "registry")
    files = {p: f.size for p, f in weights.commits[weights.head].items()}
    total = sum(files.values())
    model = root / "registry" / "models" / "tiny-7b.yaml"
    model.write_text(
        re.sub(r"revision: \w+", f"revision: {weights.head}", model.read_text()).replace(
            "size: {value: 15, unit: GB}", f"size: {{value: {total}, unit: B}}"
        )
    )
    draft = root / "registry" / "drafters" / "tiny-eagle.yaml"
    draft.write_text(
        re.sub(r"revision: \w+", f"revision: {drafter.head}", draft.read_text()).replace(
            "size: {value: 0.5, unit: GB}", "size: {value: 2, unit: KB}"
        )
    )
    entry = {
        "repo": WEIGHTS,
        "revision": weights.head,
        "resolved": True,
        "commit": weights.head,
        "files": [
            {"path": "config.json", "size": files["config.json"], "sha256": None},
            {
                "path": "model.safetensors",
                "size": len(locked),
                "sha256": hashlib.sha256(locked).hexdigest(),
            },
        ],
        "total_size": total,
        "declared_size_bytes": total,
        "gated": False,
    }
    declared = {
        "repo": DRAFTER,
        "revision": drafter.head,
        "resolved": False,
        "commit": drafter.head,
        "files": [],
        "total_size": None,
        "declared_size_bytes": 2000,
        "gated": False,
    }
    lock = {"lock_version": 1, "artifacts": {"tiny-7b/bf16": entry, "tiny-eagle": declared}}
    (root / LOCK_NAME).write_text(json.dumps(lock, indent=2) + "\n")
    return open_registry(root)


class Pod:
    """A rendered pod run as the kubelet runs it: each init container in order, for real,
    and the engine's container only when every one of them succeeded."""

    def __init__(self, rendered: RenderedK8s, registry: Registry, work: Path, hub: FakeHub):
        self.rendered, self.registry, self.work = rendered, registry, work
        self.scripts, self.models = work / "opt", work / "models"
        self.scripts.mkdir(parents=True, exist_ok=True)
        for name in (LOADER, PLAN):
            (self.scripts / name).write_text(rendered.scripts[name])
        self.env = {
            "PATH": os.environ["PATH"],
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(work / "hf-home"),
            "PROFILEGEN_MODELS": str(self.models),
        }

    def loader(self, mode: str, **env: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, str(self.scripts / LOADER), mode]
        return subprocess.run(
            argv, env={**self.env, **env}, capture_output=True, text=True, timeout=60, check=False
        )

    def start(self, role: str = "server", **env: str) -> tuple[list[tuple[str, int]], Any]:
        ran = []
        for container in self.rendered.pod(role)["initContainers"]:
            python, script, mode = container["command"]
            assert (python, script) == ("python3", f"{SCRIPTS_DIR}/{LOADER}"), container
            proc = self.loader(mode, **env)
            ran.append((container["name"], proc.returncode))
            if proc.returncode:
                return ran, proc
        profile = self.registry.profiles[self.rendered.profile_id]
        return ran, explain_k8s(self.registry, profile, self.rendered, role, Scenario(()))


def fill(folder: Path, repo: FakeRepo) -> None:
    """A folder filled beforehand with the repo's files (what an operator copies over)."""
    folder.mkdir(parents=True)
    for name, item in repo.commits[repo.head].items():
        (folder / name).write_bytes(item.content)


def landed(models: Path) -> dict[str, bytes]:
    return {
        p.relative_to(models).as_posix(): p.read_bytes()
        for p in sorted(models.rglob("*"))
        if p.is_file() and ".cache" not in p.parts and not p.name.startswith(".profilegen")
    }


def test_the_loader_resumes_a_cut_download_verifies_it_and_the_engine_starts(
    hub: FakeHub, tmp_path: Path
) -> None:
    weights, drafter = repos(hub)
    registry = registry_for(tmp_path / "root", weights, drafter, locked=SHARD)
    rendered = render_k8s(registry, registry.profiles["tiny-chat"])
    pod = Pod(rendered, registry, tmp_path, hub)
    hub.cut(WEIGHTS, "model.safetensors", after=CUT)
    ran, engine = pod.start()
    assert ran == [("load-weights", 0)]
    assert engine.launched and engine.exe == "vllm"
    assert landed(pod.models) == {
        "tiny-7b-bf16/config.json": b'{"model_type": "tiny"}',
        "tiny-7b-bf16/model.safetensors": SHARD,
        "tiny-7b-eagle3/config.json": b'{"model_type": "eagle"}',
        "tiny-7b-eagle3/model.safetensors": DRAFT,
    }
    # The dropped transfer was taken up where it stopped, at the locked commit.
    shard = [r for r in hub.requests("resolve_get", repo=WEIGHTS) if "safetensors" in r.path]
    first, resumed = shard
    assert (first.range, first.sent) == (None, CUT)
    kept = int(re.fullmatch(r"bytes=([0-9]+)-", resumed.range or "").group(1))  # type: ignore[union-attr]
    assert 0 < kept <= CUT and resumed.sent == len(SHARD) - kept
    assert all(weights.head in r.path for r in shard)
    # Started again (a restarted pod), nothing is downloaded or hashed anew; offline, the
    # volume verifies against the marker and the lock.
    hub.clear_log()
    again = pod.loader("load")
    assert again.returncode == 0, again.stderr
    assert "verified before and unchanged since" in again.stderr
    assert hub.count("resolve_get") == 0 and hub.count("model_info") == 0


def test_a_file_that_differs_from_the_lock_is_deleted_and_the_engine_never_starts(
    hub: FakeHub, tmp_path: Path
) -> None:
    weights, drafter = repos(hub)
    lying = SHARD[::-1]
    registry = registry_for(tmp_path / "root", weights, drafter, locked=lying)
    rendered = render_k8s(registry, registry.profiles["tiny-chat"])
    pod = Pod(rendered, registry, tmp_path, hub)
    ran, refused = pod.start()
    assert ran == [("load-weights", 1)]
    want, got = hashlib.sha256(lying).hexdigest(), hashlib.sha256(SHARD).hexdigest()
    assert refused.stderr.splitlines()[-1] == (
        f"profilegen: tiny-7b-bf16/model.safetensors does not match the plan: sha256 {got}, "
        f"not {want} (deleted: the next start downloads it again); refusing to start the engine"
    )
    assert not (pod.models / "tiny-7b-bf16" / "model.safetensors").exists()
    assert not list(pod.models.glob(".profilegen-loaded-*"))


def test_a_volume_filled_beforehand_is_verified_without_the_network(
    hub: FakeHub, tmp_path: Path
) -> None:
    weights, drafter = repos(hub)
    registry = registry_for(tmp_path / "root", weights, drafter, locked=SHARD)
    # claim: and hostpath: download nothing, so every artifact needs the lock's sha256.
    with pytest.raises(Exception, match="tiny-eagle: profilegen.lock.json records declared"):
        render_k8s(registry, registry.profiles["tiny-chat"], K8sOptions(model_volume="claim:m"))
    profile = registry.profiles["tiny-chat"].model_copy(update={"drafter": None})
    rendered = render_k8s(registry, profile, K8sOptions(model_volume="claim:models"))
    assert [c["name"] for c in rendered.pod("server")["initContainers"]] == ["verify-weights"]
    pod = Pod(rendered, registry, tmp_path, hub)
    missing = pod.loader("verify", HF_HUB_OFFLINE="1")
    assert missing.returncode == 1
    assert missing.stderr.splitlines()[-1] == (
        "profilegen: tiny-7b-bf16/config.json does not match the plan: missing; refusing to "
        "start the engine"
    )
    fill(pod.models / "tiny-7b-bf16", weights)
    filled = pod.loader("verify", HF_HUB_OFFLINE="1")
    assert filled.returncode == 0, filled.stderr
    assert hub.log == []


def test_pods_of_a_shared_volume_start_once_the_loader_job_has_verified_it(
    hub: FakeHub, tmp_path: Path
) -> None:
    weights, drafter = repos(hub)
    registry = registry_for(tmp_path / "root", weights, drafter, locked=SHARD)
    profile = registry.profiles["tiny-chat"].model_copy(update={"drafter": None})
    options = K8sOptions(model_volume="shared", storage_class="nfs")
    rendered = render_k8s(registry, profile, options)
    (job,) = [o for o in rendered.objects if o["kind"] == "Job"]
    (loader,) = job["spec"]["template"]["spec"]["containers"]
    assert loader["command"] == ["python3", f"{SCRIPTS_DIR}/{LOADER}", "load"]
    pod = Pod(rendered, registry, tmp_path, hub)
    fill(pod.models / "tiny-7b-bf16", weights)
    ran, refused = pod.start(PROFILEGEN_WAIT_S="0")
    assert ran == [("wait-for-weights", 1)]
    assert refused.stderr.splitlines()[-1] == (
        f"profilegen: the weights are not loaded ({pod.models}/.profilegen-loaded-tiny-chat.json "
        "is missing or stale); refusing to start the engine"
    )
    # The Job's loader finds the files in place (nothing to download) and marks them verified.
    job_run = pod.loader("load")
    assert job_run.returncode == 0, job_run.stderr
    ran, engine = pod.start(PROFILEGEN_WAIT_S="0")
    assert ran == [("wait-for-weights", 0)] and engine.launched
    assert hub.log == []


def test_a_lock_naming_a_path_outside_the_repo_vouches_for_nothing(
    hub: FakeHub, tmp_path: Path
) -> None:
    weights, drafter = repos(hub)
    root = tmp_path / "root"
    registry_for(root, weights, drafter, locked=SHARD)
    lock = json.loads((root / LOCK_NAME).read_text())
    lock["artifacts"]["tiny-7b/bf16"]["files"][0]["path"] = "../../opt/profilegen/load-weights.py"
    (root / LOCK_NAME).write_text(json.dumps(lock))
    registry = open_registry(root)
    plan = json.loads(render_k8s(registry, registry.profiles["tiny-chat"]).scripts[PLAN])
    (weights_plan, _) = plan["artifacts"]
    assert (weights_plan["verify"], weights_plan["files"]) == ("hub", [])
