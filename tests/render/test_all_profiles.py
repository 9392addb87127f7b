"""Every profile of the registry renders, passes `docker-compose config` and boots."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from profilegen.registry import Registry
from profilegen.render import render_profile
from tests.support.repo import shared_registry

from .conftest import (
    REPO,
    Bundle,
    compose_service,
    expected_package,
    run_cli,
    snapshot,
    unescape,
)


def _listed() -> list[dict[str, Any]]:
    result = run_cli("--root", str(REPO), "list", "--format", "json")
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


@pytest.mark.parametrize("row", LISTED, ids=[row["id"] for row in LISTED])
def test_profile_renders_and_parses(repo_registry: Registry, row: dict[str, Any]) -> None:
    profile = repo_registry.profiles[row["id"]]
    rendered = render_profile(repo_registry, profile)
    service = compose_service(rendered.compose)
    assert service["image"] == row["image"]
    assert service["container_name"] == f"{row['engine'].replace('.', '')}-{row['id']}"
    assert service["ports"][0]["published"] == str(row["port"])
    assert service["labels"]["io.profilegen.profile"] == row["id"]
    # compose-go reads back exactly the script and environment profilegen meant to write.
    intended = unescape({k: v for k, v in rendered.service.items() if k == "entrypoint"})
    assert service["entrypoint"] == intended["entrypoint"]
    assert set(service["environment"]) == set(rendered.service["environment"])
    patch_targets = [p.mount_target for p in rendered.manifest.patches]
    assert [v["target"] for v in service["volumes"] if v["target"] in patch_targets] == (
        patch_targets
    )
    syntax = subprocess.run(
        ["bash", "-n", "-c", service["entrypoint"][2]], capture_output=True, check=False
    )
    assert syntax.returncode == 0, syntax.stderr


@pytest.mark.parametrize("row", BOOTED, ids=[row["id"] for row in BOOTED])
def test_profile_boots(
    bundle_of: Callable[[str], Bundle], tmp_path: Path, row: dict[str, Any]
) -> None:
    bundle = bundle_of(row["id"])
    result = bundle.boot(tmp_path)
    drafting = bool(row["spec_n"])
    if "is not in the model folder" in result.stderr:
        # A drafter whose file must be downloaded apart: refused by its guard, not by a bug;
        # without drafting the same container starts.
        assert result.returncode == 1 and row["spec_n"], result.stderr
        result = bundle.boot(tmp_path, {"SPEC": "off"})
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
