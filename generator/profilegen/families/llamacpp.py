"""llama.cpp and its forks (ik_llama, beellama, …): `llama-server`, one process over all GPUs."""

from __future__ import annotations

from .base import Family

FAMILY = Family(
    kind="llama.cpp",
    label="llama.cpp",
    server="llama-server",
    template="llamacpp",
    container_prefix="llamacpp",
    dialect="profilegen.render.dialects.llamacpp:build",
    # Every llama-server generation reads the key from a file (--api-key-file).
    api_key_via="file",
    served_names="one",
    served_name_flag="--alias",
    # Without an alias it answers to the path of the weights file it loaded.
    default_served="weights-path",
    weights_format="gguf",
    model_mount="/models",
    spec_style="types",
    env_flag_prefix="LLAMA_ARG_",
    auto_context=True,
    single_process=True,
    fit="layer-split",
    log_markers=("llama_model_loader", "buffer size =", "llama_context"),
    default_kv_dtype="f16",
    first_kv_dtypes=("q8_0", None),
    first_envelope=(("gpu_layers", 999), ("flash_attn", True)),
    first_serve=(("jinja", True),),
    tools_by="template",
    offload_modes=("cpu-experts",),
    # The server image is a static binary: no Python to run the weights loader.
    image_has_hub_client=False,
    multinode=(
        "llama.cpp has no multi-node path here: its RPC backend (rpc-server on each worker, "
        "--rpc on the server) is not modelled, so profilegen refuses rather than guess; serve "
        "it on one node"
    ),
    runtime_options=frozenset(
        {
            "threads",
            "tensor_overrides",
            "mmap",
            "host_buffers",
            "kv_unified",
            "prompt_cache",
            "prompt_cache_ram_mib",
            "auto_fit",
            "auto_fit_margin_mib",
            "main_gpu",
            "max_gpus",
            "context_shift",
            "parallel_tool_calls",
            "image_min_tokens",
            "image_max_tokens",
            "gguf_overrides",
            "kv_hadamard",
            "merge_qkv",
            "recurrent_checkpoints",
            "moe_cache",
            "repeat_last_n",
            "dry",
        }
    ),  # fmt: skip
    drafter_options=frozenset({"gpu_layers", "device", "cross_ctx"}),
)
