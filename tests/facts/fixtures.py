"""Small facts files, written here, standing in for a release's facts in unit tests."""

from __future__ import annotations

from typing import Any

from profilegen.model.facts import EngineFacts

PROVENANCE = {
    "version": "9.9.0",
    "artifact": "engine-9.9.0-py3-none-any.whl",
    "sha256": "0" * 64,
    "requirement": "engine==9.9.0",
    "method": "a fixture",
    "command": "profilegen engine facts fixture",
}


def facts(**overrides: Any) -> EngineFacts:
    """An argparse-like engine: a few flags of each arity, choices, a JSON config, variables."""
    data: dict[str, Any] = {
        "engine": "fixture",
        "provenance": PROVENANCE,
        "parser": {"positionals": ["model_tag"], "underscores": True, "abbreviations": True},
        "flags": {
            "--model": {"arity": "1", "type": "str"},
            "--max-model-len": {"arity": "1", "type": "int"},
            "--gpu-memory-utilization": {"arity": "1", "type": "float", "default": 0.9},
            "--kv-cache-dtype": {"arity": "1", "choices": ["auto", "bfloat16", "fp8"]},
            "--enable-prefix-caching": {"arity": "0", "negation": ["--no-enable-prefix-caching"]},
            "--enforce-eager": {"arity": "0"},
            "--served-model-name": {"arity": "+"},
            "--speculative-config": {"arity": "1"},
            "--kv-cache-memory-bytes": {"arity": "1"},
            "--mmap": {"arity": "0", "deprecated": True, "replaced_by": "--load-mode"},
            "--default-chat-template-kwargs": {"arity": "1"},
        },
        "aliases": {"-tp": "--max-model-len", "-sc": "--speculative-config"},
        "json": {
            "--speculative-config": {
                "keys": ["method", "model", "num_speculative_tokens"],
                "values": {"method": ["mtp", "dflash", "eagle3"]},
            },
            "--default-chat-template-kwargs": {"free": True},
        },
        "env": ["VLLM_ATTENTION_BACKEND", "VLLM_USE_V2_MODEL_RUNNER"],
    }
    data.update(overrides)
    return EngineFacts.model_validate(data, strict=False)
