"""A tiny catalogue in the upstream layout, written for these tests, committed to a git repo."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REGISTRY = """\
schema: 1
entries:
  vllm/tiny-dual-fast:
    model: tiny-9b
    weights_variant: int4
    engine: vllm-stable
    drafter: tiny-mtp
    tp: 2
    max_ctx: 65536
    max_num_seqs: 2
    mem_util: 0.90
    compose_path: models/tiny-9b/vllm/compose/dual/int4/mtp.yml
    default_port: 8201
    status: experimental
    serve_aliases: [tiny-fast]
  llamacpp/tiny-single-q4:
    model: tiny-9b
    weights_variant: gguf-q4
    engine: llama-cpp-local
    drafter: null
    tp: 1
    max_ctx: 32768
    max_num_seqs: 1
    mem_util: null
    compose_path: models/tiny-9b/llama-cpp/compose/single/gguf-q4/base.yml
    default_port: 8202
    status: production
"""
MODEL = """\
schema_version: 1
id: tiny-9b
display_name: Tiny 9B
family: tiny-dense
hidden_size: 4096
num_hidden_layers: 32
num_attn_heads: 32
num_kv_heads: 8
max_ctx_supported: 65536
weights:
  int4:
    local_subdir: tiny-9b-int4
    size_gb: 5.5
    format: autoround
    hf_repo: example/Tiny-9B-int4-AutoRound
    kind: main
  gguf-q4:
    local_subdir: tiny-9b-gguf/q4
    size_gb: 5.1
    format: gguf
    hf_repo: example/Tiny-9B-GGUF
    files: [Tiny-9B-Q4_K_M.gguf]
    kind: gguf
"""
DRAFTER = """\
schema_version: 1
id: tiny-mtp
display_name: Tiny built-in MTP head
spec_method: mtp
model_compat: [tiny-9b]
n_default: 3
n_max: 3
download: false
"""
VLLM_COMPOSE = """\
# Tensor-parallel: 2
services:
  vllm-tiny-dual-fast:
    image: ${VLLM_IMAGE:-vllm/vllm-openai:v0.27.1}
    container_name: "${ESTATE_CONTAINER:-vllm-tiny-dual-fast}"
    restart: ${CLUB3090_RESTART:-unless-stopped}
    shm_size: "16gb"
    ipc: host
    ports:
      - "${BIND_HOST:-0.0.0.0}:${PORT:-8201}:8000"
    volumes:
      - ${MODEL_DIR:-../../../../../../models-cache}:/root/.cache/huggingface
      - ../../../patches/tiny-fix:/etc/club3090/tiny-fix:ro
      - ../../../../../../scripts/detect_nvlink.sh:/etc/club3090/detect_nvlink.sh:ro
    environment:
      - SPEC_N=${SPEC_N:-}
      - SPEC=${SPEC:-}
      - NVLINK_MODE=${NVLINK_MODE:-auto}
      - HUGGING_FACE_HUB_TOKEN=${HF_TOKEN:-}
      - VLLM_NO_USAGE_STATS=1
      - NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-1}
      - CUDA_VISIBLE_DEVICES
    entrypoint:
      - bash
      - -c
      - |
        set -e
        source /etc/club3090/detect_nvlink.sh
        bash /etc/club3090/tiny-fix/install.sh || exit 1
        _spec_n="$${SPEC_N:-3}"
        case "$${SPEC:-}" in off|OFF|Off|false|no|0) _spec_n=0 ;; esac
        case "$$_spec_n" in ""|*[!0-9]*) echo "bad SPEC_N" >&2; exit 1 ;; esac
        SPEC_ARGS=()
        if [ "$$_spec_n" -gt 0 ]; then
          SPEC_ARGS=(--speculative-config "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$$_spec_n}")
        fi
        AR=""
        [ "$${_NVLINK_ENABLED:-0}" = "1" ] || AR="--disable-custom-all-reduce"
        exec vllm serve $$AR "$$@" "$${SPEC_ARGS[@]}"
      - --
    command:
      - --model
      - /root/.cache/huggingface/tiny-9b-int4
      - --served-model-name
      - tiny-9b
      - --tensor-parallel-size
      - "${TP:-2}"
      - --max-model-len
      - "${MAX_MODEL_LEN:-65536}"
      - --gpu-memory-utilization
      - "${GPU_MEMORY_UTILIZATION:-0.90}"
      - --max-num-seqs
      - "${MAX_NUM_SEQS:-2}"
      - --kv-cache-dtype
      - "${KV_CACHE_DTYPE:-fp8_e4m3}"
      - --enable-prefix-caching
      - --mamba-backend
      - triton
      - --disable-log-stats
      - --override-generation-config
      - '{"temperature":${TEMP:-0.7},"top_p":${TOP_P:-0.8},"top_k":${TOP_K:-20}}'
      - --host
      - 0.0.0.0
      - --port
      - "8000"
"""
LLAMA_COMPOSE = """\
services:
  llama-tiny:
    image: ${LLAMACPP_IMAGE:-ghcr.io/ggml-org/llama.cpp:server-cuda-b10236}
    container_name: llama-tiny
    restart: unless-stopped
    ports:
      - "${BIND_HOST:-0.0.0.0}:${PORT:-8202}:8080"
    volumes:
      - "${MODEL_DIR:-../../../../../../models-cache}:/models:ro"
    entrypoint: ["/bin/bash", "-c", "exec /app/llama-server \\"$$@\\"", "--"]
    command: >-
      --host 0.0.0.0
      --port 8080
      -m /models/${GGUF_FILE:-tiny-9b-gguf/q4/Tiny-9B-Q4_K_M.gguf}
      --alias tiny-9b
      -c ${CTX_SIZE:-32768}
      -ngl 99
      -fa on
      --cache-type-k ${KV_TYPE:-q8_0}
      --cache-type-v ${KV_TYPE:-q8_0}
      -np ${NP:-1}
      --jinja
      --no-mmap
      --no-warmup
"""
INSTALL = "#!/bin/bash\necho fixed\n"


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def base_files() -> dict[str, str]:
    return {
        "scripts/lib/profiles/registry.yaml": REGISTRY,
        "scripts/lib/profiles/models/tiny-9b.yml": MODEL,
        "scripts/lib/profiles/drafters/tiny-mtp.yml": DRAFTER,
        "models/tiny-9b/vllm/compose/dual/int4/mtp.yml": VLLM_COMPOSE,
        "models/tiny-9b/llama-cpp/compose/single/gguf-q4/base.yml": LLAMA_COMPOSE,
        "models/tiny-9b/vllm/patches/tiny-fix/install.sh": INSTALL,
        "models/tiny-9b/vllm/patches/tiny-fix/README.md": "what the fix does\n",
        "scripts/detect_nvlink.sh": "_NVLINK_ENABLED=0\n",
    }


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": str(repo), "PATH": "/usr/bin:/bin"}  # fmt: skip
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return proc.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    """Writes the files, commits them, returns the commit id."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q")
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


REAL = Path(__file__).resolve().parents[2]


def empty_registry(root: Path) -> Path:
    """An empty registry at `root`: the GPU the rigs need and the schemas."""
    (root / "registry" / "gpus").mkdir(parents=True)
    shutil.copy(REAL / "registry/gpus/rtx-3090.yaml", root / "registry/gpus/rtx-3090.yaml")
    shutil.copytree(REAL / "schema", root / "schema")
    return root
