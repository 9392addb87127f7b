"""vLLM: the OpenAI-compatible server of `vllm serve`."""

from __future__ import annotations

from .base import Family

FAMILY = Family(
    kind="vllm",
    label="vLLM",
    template="vllm",
    container_prefix="vllm",
    dialect="profilegen.render.dialects.vllm:build",
    # vllm/entrypoints/openai/api_server.py reads VLLM_API_KEY.
    api_key_via="env",
    api_key_env="VLLM_API_KEY",
    fit="pool",
    log_markers=("GPU KV cache size", "non-default args", "vLLM API server"),
    output_regex="structured_outputs.regex",
    first_kv_dtypes=("fp8_e4m3", "fp8", None),
    kv_by_attention_backend=True,
    runtime_options=frozenset(
        {
            "mamba_backend",
            "mamba_stochastic_rounding",
            "mamba_philox_rounds",
            "generation_config",
            "hf_overrides",
            "kv_transfer",
        }
    ),
)
