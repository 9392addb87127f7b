"""In-container integrity: the generated entrypoint run for real on a fake vLLM package."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from .conftest import (
    BUFFERS,
    FLASH_ATTN,
    LOOKUP,
    NVLINK_TOPO,
    PKG_BEFORE,
    SEED,
    W4A8_PROFILE,
    Bundle,
    Bundles,
    build_test_registry,
    compose_config,
    expected_package,
    only_service,
    run_cli,
    sha256,
    snapshot,
    write_tree,
)

STEP_LINE = re.compile(
    r"^profilegen: ([\w.-]+/[\w.-]+: (?:done|applied|already applied|failed.*))$", re.M
)
SEED_STEPS = [  # what a first boot reports, in order
    "pr48375/install.sh: done",
    "dflash2/install.sh: done",
    "dflash15/hybrid-kv-groups-v2-cudagraph.patch: applied",
    "dflash15/qwen3_5-embed-quant.patch: applied",
    "dflash15/spec-decode-attn.patch: applied",
    "dflash15/dflash2-lookup-drafting.patch: applied",
    "wsl-uva/install.sh: done",
]


def step_lines(stderr: str) -> list[str]:
    """The per-step status lines (`dir/file: applied`), in order."""
    return [m.group(1) for m in STEP_LINE.finditer(stderr)]


def pristine() -> dict[str, bytes]:
    return {path: content.encode() for path, content in PKG_BEFORE.items()}


# --------------------------------------------------------------------------- the bundle


def test_bundle_layout(seed: Bundle, test_root: Path) -> None:
    files = snapshot(seed.dir)
    stdout = run_cli("--root", str(test_root), "render", SEED)
    assert stdout.exit_code == 0
    assert files["compose.yaml"] == stdout.stdout_bytes
    assert files[".env.example"].startswith(f"# {SEED}: ".encode())
    manifest = json.loads(files["patches.manifest.json"])
    expected = {
        "compose.yaml",
        "entrypoint.sh",
        "helpers.sh",
        "patches.manifest.json",
        ".env.example",
    }
    for patch in manifest["patches"]:
        assert patch["source"] == "vendored"
        assert patch["bundle_dir"] == f"patches/{patch['id']}"
        for f in patch["files"]:
            rel = f"{patch['bundle_dir']}/{f['path']}"
            expected.add(rel)
            assert sha256(files[rel]) == f["sha256"] and len(files[rel]) == f["size"]
            mode = (seed.dir / rel).stat().st_mode
            assert bool(mode & stat.S_IXUSR) == rel.endswith(".sh"), rel
    assert set(files) == expected
    assert [p["id"] for p in manifest["patches"]] == [
        "vllm-pr48375-mamba-drop-eagle-block",
        "vllm-dflash2-backport",
        "vllm-dflash15",
        "vllm-wsl-uva",
    ]


def test_cli_bundle(seed: Bundle, test_root: Path, tmp_path: Path) -> None:
    """`profilegen --root R render PROFILE -o DIR` writes the same bundle, and again on top."""
    out = tmp_path / "bundle"
    for _ in range(2):
        result = run_cli("--root", str(test_root), "render", SEED, "-o", str(out))
        assert result.exit_code == 0, result.output
        assert snapshot(out) == snapshot(seed.dir)
    # The next steps put the weights on the disk, verified, before `up`.
    steps = result.output.splitlines()[-3:]
    assert steps[0].startswith(f"  profilegen fetch {SEED} --model-dir ")
    assert steps[1].startswith(f"  profilegen verify {SEED} --model-dir ") and "--host" in steps[1]
    assert (
        steps[2].startswith("  MODEL_DIR=")
        and f"docker compose -f {out}/compose.yaml up" in steps[2]
    )


def test_bundle_is_relocatable(seed: Bundle, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "bundle"
    shutil.copytree(seed.dir, moved)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    service = only_service(compose_config(moved / "compose.yaml", cwd=elsewhere))
    sources = {v["target"]: v["source"] for v in service["volumes"]}
    for patch in seed.manifest["patches"]:
        assert sources[patch["mount_target"]] == str(moved / patch["bundle_dir"])
    assert sources["/root/.cache/huggingface"] == str(moved / "models")
    # The moved bundle boots like the original.
    moved_bundle = Bundle(SEED, moved, service, seed.manifest)
    result = moved_bundle.boot(tmp_path / "boot")
    assert result.returncode == 0, result.stderr


def test_bundle_refuses_a_tampered_vendored_file(tmp_path: Path) -> None:
    root = build_test_registry(tmp_path / "root")
    victim = root / "registry/patches/files/vllm-dflash15/spec-decode-attn.patch"
    data = bytearray(victim.read_bytes())
    data[10] ^= 0x01
    victim.write_bytes(bytes(data))
    out = tmp_path / "out"
    result = run_cli("--root", str(root), "render", SEED, "-o", str(out))
    assert result.exit_code == 1
    assert "vllm-dflash15/spec-decode-attn.patch" in result.output
    assert not out.exists()  # nothing is written before everything verified


# --------------------------------------------------------------------------- boots


def test_clean_boot(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path)
    assert result.returncode == 0, result.stderr
    assert step_lines(result.stderr) == SEED_STEPS
    assert snapshot(result.pkg) == expected_package(seed.patch_ids)
    for patch in seed.manifest["patches"]:
        for step in patch["steps"]:
            if step["marker"]:
                assert step["marker"] in (result.pkg / step["target"]).read_text(), step
    assert not [p for p in result.pkg.rglob("*") if p.suffix in (".orig", ".rej")]
    assert result.installers() == [
        f"{p} VLLM_MARLIN_INPUT_DTYPE=<unset>"
        for p in ("vllm-pr48375-mamba-drop-eagle-block", "vllm-dflash2-backport", "vllm-wsl-uva")
    ]
    assert result.argv is not None and result.argv[:2] == ["serve", "--disable-custom-all-reduce"]


def test_second_boot_is_idempotent(seed: Bundle, tmp_path: Path) -> None:
    first = seed.boot(tmp_path)
    assert first.returncode == 0, first.stderr
    after_first = snapshot(first.pkg)
    second = seed.boot(tmp_path)
    assert second.returncode == 0, second.stderr
    assert snapshot(second.pkg) == after_first
    assert step_lines(second.stderr) == [
        "pr48375/install.sh: done",  # installers without a marker are idempotent themselves
        "dflash2/install.sh: done",
        "dflash15/hybrid-kv-groups-v2-cudagraph.patch: already applied",
        "dflash15/qwen3_5-embed-quant.patch: already applied",
        "dflash15/spec-decode-attn.patch: already applied",
        "dflash15/dflash2-lookup-drafting.patch: already applied",
        "wsl-uva/install.sh: already applied",
    ]
    assert second.argv == first.argv


@pytest.mark.parametrize(
    "victim",
    [
        "pr48375/install.sh",
        "dflash15/spec-decode-attn.patch",
        "wsl-uva/install.sh",  # the last file: still nothing applied before the check
    ],
)
def test_tampered_patch_file_refuses_boot(seed: Bundle, tmp_path: Path, victim: str) -> None:
    seed.prepare(tmp_path)
    path = tmp_path / "etc" / victim
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x20
    path.write_bytes(bytes(data))
    result = seed.boot(tmp_path)
    assert result.returncode == 1
    assert f"patch file {victim} does not match its pinned sha256" in result.stderr
    assert snapshot(result.pkg) == pristine()
    assert not result.started and result.installers() == []


def test_missing_patch_file_refuses_boot(seed: Bundle, tmp_path: Path) -> None:
    seed.prepare(tmp_path)
    (tmp_path / "etc/dflash15/dflash2-lookup-drafting.patch").unlink()
    result = seed.boot(tmp_path)
    assert result.returncode == 1
    assert "dflash15/dflash2-lookup-drafting.patch is missing" in result.stderr
    assert snapshot(result.pkg) == pristine() and not result.started


BROKEN_ANCHOR = PKG_BEFORE[FLASH_ATTN].replace("flash_attn_varlen_func", "flash_attn_func")


def test_context_mismatch_on_first_boot(seed: Bundle, tmp_path: Path) -> None:
    # The first hunk of spec-decode-attn.patch still matches, the second does not.
    seed.prepare(tmp_path, {**PKG_BEFORE, FLASH_ATTN: BROKEN_ANCHOR})
    result = seed.boot(tmp_path)
    assert result.returncode == 1
    assert "patch dflash15/spec-decode-attn.patch does not apply" in result.stderr
    assert not result.started
    tree = snapshot(result.pkg)
    assert tree[FLASH_ATTN] == BROKEN_ANCHOR.encode()  # the dry run kept hunk 1 out
    assert not [p for p in tree if p.endswith((".orig", ".rej"))]
    # Steps after the failing one never ran.
    assert b"def suffix_lookup" not in tree[LOOKUP]
    assert tree[BUFFERS] == PKG_BEFORE[BUFFERS].encode()
    assert step_lines(result.stderr)[-1] == "dflash15/qwen3_5-embed-quant.patch: applied"


def test_context_mismatch_leaves_package_unchanged(seed: Bundle, tmp_path: Path) -> None:
    first = seed.boot(tmp_path)
    assert first.returncode == 0, first.stderr
    # An image update reverts flash_attn.py to a shape the diff does not know.
    write_tree(first.pkg, {FLASH_ATTN: BROKEN_ANCHOR})
    before = snapshot(first.pkg)
    result = seed.boot(tmp_path)
    assert result.returncode == 1 and not result.started
    assert snapshot(result.pkg) == before


def test_bad_tunable_refuses_boot(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, {"MAX_MODEL_LEN": "128k"})
    assert result.returncode == 1 and not result.started
    assert "MAX_MODEL_LEN must be a whole number, got '128k'" in result.stderr
    assert snapshot(result.pkg) == pristine()


def test_bad_spec_n_changes_nothing(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, {"SPEC_N": "abc"})
    assert result.returncode == 1 and not result.started
    assert snapshot(result.pkg) == pristine()


# --------------------------------------------------------------------------- guards


@pytest.mark.parametrize("util", ["0.90", "0.851", "1"])
def test_rig_guard_refuses_high_utilization(seed: Bundle, tmp_path: Path, util: str) -> None:
    service = seed.service_with({"GPU_MEMORY_UTILIZATION": util})
    assert service["environment"]["GPU_MEMORY_UTILIZATION"] == util
    result = seed.boot(tmp_path, service=service)
    assert result.returncode == 2
    assert "exceeds 0.85 on rig 2x3090-pcie-x16x4-wsl2" in result.stderr
    assert not result.started and snapshot(result.pkg) == pristine()


def test_rig_guard_accepts_its_limit(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, {"GPU_MEMORY_UTILIZATION": "0.85"})
    assert result.returncode == 0, result.stderr


def test_fp8_kv_with_flash_attn_refused_on_3090(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, {"KV_CACHE_DTYPE": "fp8_e4m3"})
    assert result.returncode == 2
    assert "KV_CACHE_DTYPE=fp8_e4m3 is not accepted by FLASH_ATTN" in result.stderr
    assert not result.started and snapshot(result.pkg) == pristine()


def test_fp8_kv_with_flashinfer_boots(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, {"KV_CACHE_DTYPE": "fp8_e4m3", "ATTN_BACKEND": "FLASHINFER"})
    assert result.returncode == 0, result.stderr
    assert result.argv is not None
    assert result.argv[result.argv.index("--kv-cache-dtype") + 1] == "fp8_e4m3"
    assert result.argv[result.argv.index("--attention-backend") + 1] == "FLASHINFER"


# --------------------------------------------------------------------------- NVLink


def test_force_off_ignores_nvlink(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, topo=NVLINK_TOPO)
    assert result.argv is not None and "--disable-custom-all-reduce" in result.argv
    assert result.engine_env is not None and result.engine_env["NCCL_P2P_DISABLE"] == "1"


@pytest.mark.parametrize(
    ("topo", "nvlink"),
    [(NVLINK_TOPO, True), (None, False), ("GPU0\t X \tPHB\nGPU1\tPHB\t X \n", False)],
)
def test_nvlink_auto_detection(
    bundle_of: Bundles, tmp_path: Path, topo: str | None, nvlink: bool
) -> None:
    bundle = bundle_of(W4A8_PROFILE)
    assert bundle.service["environment"]["NVLINK_MODE"] == "auto"
    result = bundle.boot(tmp_path, topo=topo)
    assert result.returncode == 0, result.stderr
    assert result.argv is not None and result.engine_env is not None
    assert ("--disable-custom-all-reduce" not in result.argv) == nvlink
    assert ("NCCL_P2P_DISABLE" not in result.engine_env) == nvlink


def test_bad_nvlink_mode(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, {"NVLINK_MODE": "sometimes"})
    assert result.returncode == 1 and not result.started


# --------------------------------------------------------------------------- W4A8 switch

W4A8_BROKEN = {
    **PKG_BEFORE,
    "model_executor/layers/quantization/inc.py": "def other():\n    pass\n",
}


@pytest.fixture
def w4a8(bundle_of: Bundles) -> Bundle:
    bundle = bundle_of(W4A8_PROFILE)
    assert bundle.patch_ids[0] == "w4a8-int8-act"
    return bundle


def test_w4a8_default_on(w4a8: Bundle, tmp_path: Path) -> None:
    assert w4a8.service["environment"]["W4A8"] == "1"
    result = w4a8.boot(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.engine_env is not None
    assert result.engine_env["VLLM_MARLIN_INPUT_DTYPE"] == "int8"
    assert result.installers()[0] == "w4a8-int8-act VLLM_MARLIN_INPUT_DTYPE=int8"
    assert snapshot(result.pkg) == expected_package(w4a8.patch_ids)


@pytest.mark.parametrize("off", ["0", "false", "no", "off"])
def test_w4a8_off_unsets_the_variable(w4a8: Bundle, tmp_path: Path, off: str) -> None:
    # vLLM rejects an empty VLLM_MARLIN_INPUT_DTYPE: "off" must unset it, even if set empty.
    result = w4a8.boot(tmp_path, {"W4A8": off, "VLLM_MARLIN_INPUT_DTYPE": ""})
    assert result.returncode == 0, result.stderr
    assert result.engine_env is not None
    assert "VLLM_MARLIN_INPUT_DTYPE" not in result.engine_env
    assert result.installers()[0] == "w4a8-int8-act VLLM_MARLIN_INPUT_DTYPE=<unset>"


def test_w4a8_failing_installer_tolerated_when_off(w4a8: Bundle, tmp_path: Path) -> None:
    w4a8.prepare(tmp_path, W4A8_BROKEN)
    result = w4a8.boot(tmp_path, {"W4A8": "0"})
    assert result.returncode == 0, result.stderr
    assert "w4a8/install.sh: failed (not required with the current settings)" in result.stderr
    assert result.engine_env is not None and "VLLM_MARLIN_INPUT_DTYPE" not in result.engine_env


def test_w4a8_failing_installer_fatal_when_on(w4a8: Bundle, tmp_path: Path) -> None:
    w4a8.prepare(tmp_path, W4A8_BROKEN)
    result = w4a8.boot(tmp_path, {"W4A8": "1"})
    assert result.returncode == 1
    assert "patch installer w4a8/install.sh failed; refusing to boot" in result.stderr
    assert not result.started


def test_w4a8_bad_switch(w4a8: Bundle, tmp_path: Path) -> None:
    result = w4a8.boot(tmp_path, {"W4A8": "maybe"})
    assert result.returncode == 1 and not result.started


def test_w4a8_default_off_profile(bundle_of: Bundles, tmp_path: Path) -> None:
    bundle = bundle_of("qwen38-27b-dual-ultrafast")
    assert bundle.service["environment"]["W4A8"] == "0"
    result = bundle.boot(tmp_path, {"VLLM_MARLIN_INPUT_DTYPE": ""})
    assert result.returncode == 0, result.stderr
    assert result.engine_env is not None and "VLLM_MARLIN_INPUT_DTYPE" not in result.engine_env


def test_no_stray_environment(seed: Bundle, tmp_path: Path) -> None:
    """The runner gives the script only the container env (no host leakage in the test)."""
    result = seed.boot(tmp_path)
    assert result.engine_env is not None
    assert set(result.engine_env) - set(seed.service["environment"]) <= {
        "PATH", "HOME", "PWD", "SHLVL", "_", "OLDPWD",
        "PROFILEGEN_PATCH_ROOT", "PROFILEGEN_PACKAGE_DIR",
    }  # fmt: skip
    assert os.environ.get("HF_TOKEN") is None or "HF_TOKEN" not in result.engine_env


def test_patch_installers_never_see_the_api_key(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path, {"API_KEY": "sk-installers-must-not-see-this"})
    assert result.returncode == 0, result.stderr
    assert result.engine_env is not None
    assert result.engine_env["VLLM_API_KEY"] == "sk-installers-must-not-see-this"
    assert result.installers(), "the seed runs its installers"
    assert not (tmp_path / "saw-a-key.log").exists()
