"""The seed's pinned upstream digests, a fresh compose/ tree (the checked-in goldens of every
profile), determinism."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from profilegen.generated.tree import COMPOSE_DIR, GENERATED_NAMES, plan_all
from profilegen.registry import Registry, open_registry
from profilegen.render import render_profile

from .conftest import REPO, SEED

COMMIT = "ee06b714bffb76f4bb57753250d9b682c35dddd8"
RAW = f"https://raw.githubusercontent.com/noonghunna/club-3090/{COMMIT}/"
Q38 = "models/qwen3.8-27b/vllm/patches/"
Q36 = "models/qwen3.6-27b/vllm/patches/"
# REFERENCE.md, "Upstream file sizes and sha256 at that commit": (patch id, upstream path) ->
# (bytes, sha256). scripts/detect_nvlink.sh is not a patch file (the NVLink check is inline).
UPSTREAM_PINS: dict[tuple[str, str], tuple[int, str]] = {
    ("vllm-dflash15", Q38 + "vllm-dflash15/hybrid-kv-groups-v2-cudagraph.patch"): (
        6301, "b15216d4530b2c91dcd8bf7ef158c46be2826e3817bfdb8c165c8b23fa8790be"),
    ("vllm-dflash15", Q38 + "vllm-dflash15/qwen3_5-embed-quant.patch"): (
        1395, "0a1b9ca06798c1aef582995de5a0beb3ad9a22a54cdbd2361986563a9c7a980e"),
    ("vllm-dflash15", Q38 + "vllm-dflash15/spec-decode-attn.patch"): (
        15422, "43651ee99a4c749cd3e07a52834374cadee0a9f2612b644f74c1324774f16b5b"),
    ("vllm-dflash15", Q38 + "vllm-dflash15/dflash2-lookup-drafting.patch"): (
        46753, "3ccaaccc417c5daa0850a275e7360ddd80d7722b95db8b93145d7dd439f706da"),
    ("vllm-wsl-uva", Q38 + "vllm-wsl-uva/install.sh"): (
        1908, "00dff5a40a8b4dd6e57fd7dccc55aafddd9fab90cd036356088f412fefc84e3e"),
    ("vllm-dflash2-backport", Q38 + "vllm-dflash2-backport/dflash2-backport.patch"): (
        40388, "f0176948a58099ca7273199a30a25e52728cfcfa1b4ec1748ddc431f8e5cb73e"),
    ("vllm-dflash2-backport", Q38 + "vllm-dflash2-backport/install.sh"): (
        1119, "f80c7b3d286a99c1347c09a9958aa20cf6af4aa8d80872602ae06711cd5b7a8d"),
    ("vllm-dflash2-backport", Q38 + "vllm-dflash2-backport/patch_topk_4arg_compat.py"): (
        1639, "fb0df65400e444a9ed842e35d2398b6be49de13d0219b0d52793ccc10369a77a"),
    ("vllm-dflash2-backport", Q38 + "vllm-dflash2-backport/_check_applied.py"): (
        1189, "b75b4b37e982b940187b2286de81659a2c28c1003a33a5aa694e81676f19f1c0"),
    ("vllm-pr48375-mamba-drop-eagle-block",
     Q36 + "vllm-pr48375-mamba-drop-eagle-block/install.sh"): (
        385, "7f90298659c9302d8c683dd8506365eab10184a94a3151c891a40e95c346a055"),
    ("vllm-pr48375-mamba-drop-eagle-block",
     Q36 + "vllm-pr48375-mamba-drop-eagle-block/patch_mamba_drop_eagle_block.py"): (
        2247, "c1d691a3f005a1da5e443851e5434d904eba2ad327b20710f4122cd55d3bc71d"),
    ("vllm-gdn-mtp-async-spec-order", Q36 + "vllm-gdn-mtp-async-spec-order/install.sh"): (
        417, "e09186081103742845a5a979c5ef33366509d5d27a7e9ccc6e130d9dd83a895c"),
    ("vllm-gdn-mtp-async-spec-order",
     Q36 + "vllm-gdn-mtp-async-spec-order/patch_gdn_mtp_async_spec_order.py"): (
        3489, "3cee2b08b5697ac4ba4d3ad932f2061499d14fdb3908e576874b2996ef3b201f"),
    ("w4a8-int8-act", Q36 + "w4a8-int8-act/install.sh"): (
        1852, "69b567894d8880fbb63033c2dfcf27dc81acd422442919d3a4d9dd1c40d1114d"),
    ("w4a8-int8-act", Q36 + "w4a8-int8-act/patch-inc-w4a8.py"): (
        2883, "36c7541ee8323ac41e898259902f00ba583c0998be5d30b5444043984482f882"),
    ("w4a8-int8-act", Q36 + "w4a8-int8-act/patch-negscale-fold.py"): (
        6686, "20ba5256314a20035555560bf3b016a7bef32ed3050a5e95bfa0e0cdfaeb8c41"),
}  # fmt: skip
SEED_PATCHES = [
    "vllm-pr48375-mamba-drop-eagle-block",
    "vllm-dflash2-backport",
    "vllm-dflash15",
    "vllm-wsl-uva",
]


@pytest.fixture(scope="module")
def seed_files(repo_registry: Registry) -> dict[str, bytes]:
    return render_profile(repo_registry, repo_registry.profiles[SEED]).files()


def _manifest_pins(patches: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, str]]:
    pins = {}
    for patch in patches:
        for f in patch["files"]:
            assert f["url"] == patch["origin"] + f["path"]
            assert f["url"].startswith(RAW), f["url"]
            pins[(patch["id"], f["url"][len(RAW) :])] = (f["size"], f["sha256"])
    return pins


def test_seed_manifest_pins_upstream(seed_files: dict[str, bytes]) -> None:
    manifest = json.loads(seed_files["patches.manifest.json"])
    assert manifest["profile"] == SEED
    assert manifest["engine_image"] == "vllm/vllm-openai:v0.27.1"
    assert [p["id"] for p in manifest["patches"]] == SEED_PATCHES
    for patch in manifest["patches"]:
        assert patch["source"] == "remote" and patch["fail_closed"] is True
        assert patch["drop_when"]
    assert _manifest_pins(manifest["patches"]) == {
        key: pin for key, pin in UPSTREAM_PINS.items() if key[0] in SEED_PATCHES
    }
    dflash15 = manifest["patches"][2]
    assert [(s["method"], s["strip"], s["target"], s["marker"]) for s in dflash15["steps"]] == [
        ("diff", 1, "v1/core/kv_cache_utils.py", "def _prefer_padding_sliding_window_buckets"),
        ("diff", 1, "model_executor/models/qwen3_5.py",
         'prefix=maybe_prefix(prefix, "embed_tokens")'),
        ("diff", 1, "v1/attention/backends/flash_attn.py", "split-KV Triton attention"),
        ("diff", 1, "v1/worker/gpu/spec_decode/dflash2/lookup.py", "def suffix_lookup"),
    ]  # fmt: skip
    assert manifest["package_dir"] == "/usr/local/lib/python3.12/dist-packages/vllm"


def test_every_upstream_pin_is_in_the_registry(repo_registry: Registry) -> None:
    pinned_ids = {patch_id for patch_id, _ in UPSTREAM_PINS}
    pins: dict[tuple[str, str], tuple[int, str]] = {}
    for profile in repo_registry.concrete_profiles():
        manifest = json.loads(render_profile(repo_registry, profile).manifest_json)
        pins.update(_manifest_pins([p for p in manifest["patches"] if p["id"] in pinned_ids]))
    assert pins == UPSTREAM_PINS


def test_checked_in_tree_is_fresh(repo_registry: Registry) -> None:
    plan = plan_all(repo_registry)
    stale = [rel for rel, content in plan.items() if _read(REPO / rel) != content]
    assert not stale, f"stale generated files (run `profilegen render --all`): {stale}"
    folders = {p.name for p in (REPO / COMPOSE_DIR).iterdir() if p.is_dir()}
    assert folders == {rel.split("/")[1] for rel in plan if rel.startswith(f"{COMPOSE_DIR}/")}
    for folder in folders:
        on_disk = {p.name for p in (REPO / COMPOSE_DIR / folder).iterdir()}
        assert on_disk == set(GENERATED_NAMES), folder


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


# --------------------------------------------------------------------------- determinism


def test_render_twice_is_identical(repo_registry: Registry) -> None:
    profile = repo_registry.profiles[SEED]
    assert render_profile(repo_registry, profile).files() == (
        render_profile(repo_registry, profile).files()
    )


def test_registries_in_different_places_render_identically(
    repo_registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shallow, deep = tmp_path / "a", tmp_path / "some" / "deeper" / "place"
    for root in (shallow, deep):
        shutil.copytree(REPO / "registry", root / "registry")
    monkeypatch.chdir(deep)
    plan_deep = plan_all(open_registry(deep))
    monkeypatch.chdir(tmp_path)
    plan_shallow = plan_all(open_registry(shallow))
    assert plan_shallow == plan_deep == plan_all(repo_registry)
    assert all(str(tmp_path).encode() not in content for content in plan_deep.values())


def test_render_does_not_depend_on_hash_seed(seed_files: dict[str, bytes]) -> None:
    outputs = set()
    for seed in ("0", "4242"):
        proc = subprocess.run(
            [sys.executable, "-m", "profilegen", "--root", str(REPO), "render", SEED],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
            timeout=120,
        )
        outputs.add(proc.stdout)
    assert outputs == {seed_files["compose.yaml"]}
