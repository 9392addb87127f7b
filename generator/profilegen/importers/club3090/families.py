"""What every engine of a family shares in our registry: tunables, container variables, flags."""

from __future__ import annotations

from typing import Any


def _t(env: str, field: str, kind: str, help_text: str, scope: str = "container") -> dict[str, Any]:
    out = {"env": env, "field": field, "type": kind, "help": help_text}
    if scope != "container":
        out["scope"] = scope
    return out


SAMPLER_TUNABLES = [
    _t("TEMP", "profile.serve.sampler.temperature", "float", "default sampling temperature"),
    _t("TOP_P", "profile.serve.sampler.top_p", "float", "default nucleus sampling threshold"),
    _t("TOP_K", "profile.serve.sampler.top_k", "int", "default top-k"),
    _t("MIN_P", "profile.serve.sampler.min_p", "float", "default min-p"),
    _t(
        "PRESENCE_PENALTY",
        "profile.serve.sampler.presence_penalty",
        "float",
        "default presence penalty",
    ),
    _t(
        "REPEAT_PENALTY",
        "profile.serve.sampler.repetition_penalty",
        "float",
        "default repetition penalty (1.0 = off)",
    ),
]
COMPOSE_TUNABLES = [
    _t("BIND_HOST", "profile.bind_host", "word", "host address the port is published on", "compose"),
    _t("PORT", "profile.port", "int", "host port of the OpenAI-compatible API", "compose"),
    {"env": "MODEL_DIR", "default": "./models", "type": "path", "scope": "compose",
     "help": "host folder holding the downloaded model folders"},
    _t("CLUB3090_RESTART", "profile.restart", "word", "restart policy (set no while debugging a boot loop)", "compose"),
    _t("DOCKER_GID", "profile.user_gid", "int", "group id the container runs with", "compose"),
]  # fmt: skip
SPEC_N = _t(
    "SPEC_N",
    "profile.drafter.width",
    "int",
    "speculative draft width; 0 (or SPEC=off) serves without the drafter",
)
NVLINK = _t("NVLINK_MODE", "profile.nvlink_mode", "word",
            "auto detects NVLink (or PCIe peer-to-peer); force_off disables custom all-reduce and P2P; force_on and pcie_p2p enable them")  # fmt: skip

LMCACHE_TUNABLES = [
    _t("LMCACHE_CHUNK_SIZE", "profile.runtime.lmcache.chunk_size", "int", "LMCache chunk in tokens (a multiple of vLLM's KV block)"),
    _t("LMCACHE_L1_GB", "profile.runtime.lmcache.l1_size_gb", "int", "host RAM for LMCache's L1 tier, in GB"),
    _t("LMCACHE_L2", "profile.runtime.lmcache.l2", "bool", "also keep KV chunks on disk (LMCache L2)"),
]  # fmt: skip
VLLM_TUNABLES = [
    _t("TP", "profile.envelope.tp", "int", "tensor-parallel size (number of GPUs the model is split over)"),
    _t("PP", "profile.envelope.pp", "int", "pipeline-parallel size (stages the layers are split into)"),
    _t("MAX_MODEL_LEN", "profile.envelope.max_model_len", "int", "longest context in tokens the server accepts"),
    _t("GPU_MEMORY_UTILIZATION", "profile.envelope.gpu_memory_utilization", "float", "fraction of each GPU's memory vLLM may claim"),
    _t("MAX_NUM_SEQS", "profile.envelope.max_num_seqs", "int", "requests decoded concurrently"),
    _t("KV_CACHE_MEMORY", "profile.envelope.kv_cache_memory", "int", "bytes of KV cache per GPU (pins the pool instead of deriving it from utilization)"),
    _t("MAX_NUM_BATCHED_TOKENS", "profile.envelope.max_num_batched_tokens", "int", "tokens scheduled per engine step (prefill chunk size)"),
    _t("LONG_PREFILL_TOKEN_THRESHOLD", "profile.envelope.long_prefill_token_threshold", "int", "prompts longer than this are prefilled in chunks"),
    _t("KV_CACHE_DTYPE", "profile.envelope.kv_cache_dtype", "word", "KV-cache element type"),
    _t("MAMBA_SSM_CACHE_DTYPE", "profile.envelope.mamba_ssm_cache_dtype", "word", "element type of the linear-attention recurrent state"),
    _t("ATTN_BACKEND", "profile.envelope.attention_backend", "word", "attention backend (FLASH_ATTN takes only 16-bit KV on Ampere)"),
    _t("CG_MAX", "profile.envelope.cudagraph_max_capture", "int", "largest batch size captured as a CUDA graph"),
    # Read by the hybrid-KV patch from its environment, not passed as a flag.
    {**_t("VLLM_V2_CUDAGRAPH_MEM_MIB", "profile.envelope.cudagraph_mem_mib", "int", "MiB reserved for CUDA graphs"), "reaches": "environment"},
    SPEC_N,
    _t("ENABLE_THINKING", "profile.serve.chat_template_kwargs.enable_thinking", "bool", "default for the chat template's thinking switch"),
    _t("REASONING_EFFORT", "profile.serve.chat_template_kwargs.reasoning_effort", "word", "default reasoning effort passed to the chat template"),
    *SAMPLER_TUNABLES,
    NVLINK,
]  # fmt: skip
LLAMA_TUNABLES = [
    _t("CTX_SIZE", "profile.envelope.context_flag", "int", "context size in tokens shared by all slots"),
    _t("BATCH_SIZE", "profile.envelope.batch_size", "int", "logical batch size for prompt processing"),
    _t("UBATCH_SIZE", "profile.envelope.ubatch_size", "int", "physical micro-batch size; larger prefills faster but needs more VRAM"),
    _t("KV_TYPE", "profile.envelope.kv_cache_dtype", "word", "KV-cache type (K, and V unless the profile sets V apart)"),
    _t("NP", "profile.envelope.max_num_seqs", "int", "number of server slots (concurrent requests)"),
    _t("SPLIT_MODE", "profile.envelope.split_mode", "word", "how the model is split over several cards (none, layer, row)"),
    _t("TENSOR_SPLIT", "profile.envelope.tensor_split", "word", "share of the model per card, comma-separated"),
    SPEC_N,
    _t("REASONING", "profile.serve.chat_template_kwargs.enable_thinking", "word", "thinking by default: on (true), off (false) or auto"),
    _t("REASONING_FORMAT", "profile.serve.reasoning_parser", "word", "how reasoning is returned (deepseek puts it in reasoning_content)"),
    _t("REASONING_EFFORT", "profile.serve.chat_template_kwargs.reasoning_effort", "word", "default reasoning effort passed to the chat template"),
    *SAMPLER_TUNABLES,
]  # fmt: skip
VLLM_ENV: dict[str, Any] = {
    "NVIDIA_VISIBLE_DEVICES": {"host": ["NVIDIA_VISIBLE_DEVICES"], "default": "all"},
    "HUGGING_FACE_HUB_TOKEN": {"host": ["HF_TOKEN"]},
    "HF_HUB_OFFLINE": {"host": ["HF_HUB_OFFLINE", "OFFLINE"], "default": "0"},
    "TRANSFORMERS_OFFLINE": {"host": ["TRANSFORMERS_OFFLINE", "OFFLINE"], "default": "0"},
    "VLLM_WORKER_MULTIPROC_METHOD": "spawn",
    "NCCL_CUMEM_ENABLE": "0",
    "VLLM_NO_USAGE_STATS": "1",
    "OMP_NUM_THREADS": "1",
}
VLLM_FLAGS = [
    "--model", "--served-model-name", "--dtype", "--quantization", "--tensor-parallel-size",
    "--pipeline-parallel-size", "--max-model-len", "--gpu-memory-utilization", "--max-num-seqs",
    "--kv-cache-memory", "--max-num-batched-tokens", "--long-prefill-token-threshold",
    "--kv-cache-dtype", "--mamba-ssm-cache-dtype", "--mamba-cache-mode", "--attention-backend",
    "--enable-prefix-caching", "--no-enable-prefix-caching", "--enable-chunked-prefill",
    "--no-enable-chunked-prefill", "--async-scheduling", "--no-async-scheduling",
    "--compilation-config", "--enforce-eager", "--enable-expert-parallel", "--trust-remote-code",
    "--language-model-only", "--limit-mm-per-prompt", "--chat-template", "--reasoning-parser",
    "--enable-auto-tool-choice", "--tool-call-parser", "--default-chat-template-kwargs",
    "--override-generation-config", "--speculative-config", "--disable-custom-all-reduce",
    "--host", "--port",
]  # fmt: skip
LLAMA_FLAGS = [
    "-m", "--mmproj", "--alias", "-c", "-b", "-ub", "-ngl", "-sm", "-ts", "-fa", "--cache-type-k",
    "--cache-type-v", "-np", "--jinja", "--chat-template-file", "--reasoning", "--reasoning-format",
    "--reasoning-budget", "--chat-template-kwargs", "--temp", "--top-p", "--top-k", "--min-p",
    "--presence-penalty", "--repeat-penalty", "--spec-type", "--spec-draft-model",
    "--spec-draft-n-max", "--host", "--port",
]  # fmt: skip
VLLM_KV = ["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"]
LLAMA_KV = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"]

FAMILIES: dict[str, dict[str, Any]] = {
    "vllm": {
        "kind": "vllm", "binary": "vllm", "container_port": 8000,
        "package_dir": "/usr/local/lib/python3.12/dist-packages/vllm",
        "tunables": VLLM_TUNABLES, "env": VLLM_ENV, "flags": VLLM_FLAGS, "kv": VLLM_KV,
    },
    "llama.cpp": {
        "kind": "llama.cpp", "binary": "/app/llama-server", "container_port": 8080, "ipc_host": False,
        "tunables": LLAMA_TUNABLES, "env": {}, "flags": LLAMA_FLAGS, "kv": LLAMA_KV,
    },
}  # fmt: skip
