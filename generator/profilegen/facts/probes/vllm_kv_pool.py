"""Sizes vLLM KV pools with the release's own code: run by that release's Python.

Not part of profilegen's import graph: `facts/kv_pool.py` runs it with the interpreter of
the vLLM environment (`releases/vllm_env.py`), feeding JSON on stdin:

    {"queries": [{"layers": [...], "tp": 2, "cache_dtype": "fp8_e4m3", ...}, ...]}

Each query's layers are built into the release's KV cache specs (FullAttentionSpec,
SlidingWindowSpec, MLAAttentionSpec, MambaSpec with the state shapes and dtypes of
MambaStateShapeCalculator/MambaStateDtypeCalculator); the attention block size is aligned to
the recurrent page the way `platforms/interface.py` `_align_hybrid_block_size` does; and
`vllm.v1.core.kv_cache_utils.get_kv_cache_configs` sizes the pool from the available bytes.
The configuration it reads is a stand-in holding only the fields the sizing code reads (no
model is loaded). It prints {"answers": [...]} in query order: the blocks, the tokens vLLM
logs ("GPU KV cache size"), the concurrency, the block size; where one request does not
fit, vLLM's own refusal, the pool it would have made, and the longest context its estimate
(`_estimate_max_model_len_from_groups`) allows.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import sys
from types import SimpleNamespace
from typing import Any

logging.disable(logging.CRITICAL)


def _torch_dtype(name: str) -> Any:
    from vllm.utils.torch_utils import STR_DTYPE_TO_TORCH_DTYPE

    return STR_DTYPE_TO_TORCH_DTYPE[name]


def _cache_torch_dtype(cache_dtype: str, model_dtype: str) -> Any:
    from vllm.utils.torch_utils import get_kv_cache_torch_dtype

    return get_kv_cache_torch_dtype(cache_dtype, _torch_dtype(model_dtype))


class _Config(SimpleNamespace):
    """The fields of VllmConfig that kv_cache_utils and kv_cache_interface read."""

    @property
    def max_concurrent_batches(self) -> int:
        return 2 if bool(self.scheduler_config.async_scheduling) else 1

    @property
    def max_in_flight_tokens(self) -> int:
        return self.max_concurrent_batches * int(self.scheduler_config.max_num_batched_tokens)


def _config(q: dict[str, Any], block_size: int, mamba_block: int | None) -> _Config:
    return _Config(
        cache_config=SimpleNamespace(
            num_gpu_blocks_override=None,
            mamba_cache_mode=q["mamba_cache_mode"],
            block_size=block_size,
            mamba_block_size=mamba_block,
            enable_prefix_caching=q["prefix_caching"],
            prefix_match_unit=None,
        ),
        model_config=SimpleNamespace(
            max_model_len=q["max_model_len"], original_max_model_len=q["max_model_len"]
        ),
        parallel_config=SimpleNamespace(decode_context_parallel_size=1, pipeline_parallel_size=1),
        scheduler_config=SimpleNamespace(
            disable_hybrid_kv_cache_manager=False,
            max_num_encoder_input_tokens=q["max_num_batched_tokens"],
            max_num_batched_tokens=q["max_num_batched_tokens"],
            max_num_seqs=q["max_num_seqs"],
            async_scheduling=q["async_scheduling"],
        ),
        speculative_config=None,
        kv_transfer_config=None,
    )


def _mamba_state(layer: dict[str, Any], q: dict[str, Any]) -> tuple[Any, Any]:
    from vllm.model_executor.layers.mamba.mamba_utils import (
        MambaStateDtypeCalculator as Dtypes,
    )
    from vllm.model_executor.layers.mamba.mamba_utils import (
        MambaStateShapeCalculator as Shapes,
    )

    tp, spec = q["tp"], q["num_speculative_tokens"]
    model_dtype = _torch_dtype(q["model_dtype"])
    conv, ssm = q["mamba_cache_dtype"], q["mamba_ssm_cache_dtype"]
    if layer["kind"] == "gdn":
        shapes = Shapes.gated_delta_net_state_shape(
            tp, layer["num_k_heads"], layer["num_v_heads"], layer["head_k_dim"],
            layer["head_v_dim"], layer["conv_kernel"], spec,
        )  # fmt: skip
        return shapes, Dtypes.gated_delta_net_state_dtype(model_dtype, conv, ssm)
    shapes = Shapes.mamba2_state_shape(
        tp, layer["intermediate_size"], layer["n_groups"], layer["num_heads"],
        layer["head_dim"], layer["state_size"], layer["conv_kernel"], spec,
    )  # fmt: skip
    return shapes, Dtypes.mamba2_state_dtype(model_dtype, conv, ssm)


@functools.cache
def _by_block_stride(backend: str | None) -> bool:
    """Whether the backend reads KV pages by the block stride (padding a page is allowed).

    Asked of the backend class where it imports on the CPU build (FLASH_ATTN, TRITON_ATTN);
    FlashInfer's module is not in the CPU build, and its get_kv_cache_stride_order puts the
    blocks first in both layouts, which is what the class would answer.
    """
    from vllm.config import VllmConfig, set_current_vllm_config
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    try:
        with set_current_vllm_config(VllmConfig()):
            cls = AttentionBackendEnum[backend or "FLASH_ATTN"].get_class()
            return bool(cls.indexes_kv_by_block_stride())
    except Exception:
        return True


def _attention_spec(layer: dict[str, Any], q: dict[str, Any], block_size: int) -> Any:
    from vllm.v1.kv_cache_interface import (
        FullAttentionSpec,
        MLAAttentionSpec,
        SlidingWindowSpec,
        get_kv_quant_mode,
    )

    cache_dtype = q["cache_dtype"]
    common = {
        "block_size": block_size,
        "num_kv_heads": layer["num_kv_heads"],
        "head_size": layer["head_size"],
        "dtype": _cache_torch_dtype(cache_dtype, q["model_dtype"]),
        "kv_quant_mode": get_kv_quant_mode(cache_dtype),
        "indexes_kv_by_block_stride": q["by_block_stride"],
    }
    if layer["kind"] == "mla":
        return MLAAttentionSpec(**common, cache_dtype_str=cache_dtype)
    if layer["kind"] == "sliding":
        return SlidingWindowSpec(**common, sliding_window=layer["sliding_window"])
    return FullAttentionSpec(**common)


def _block_sizes(q: dict[str, Any]) -> tuple[int, int | None, int | None]:
    """(attention block size, mamba block size, padded mamba page): _align_hybrid_block_size."""
    from vllm.v1.kv_cache_interface import MambaSpec

    block = q["kernel_block_size"]
    mamba = [lay for lay in q["layers"] if lay["kind"] in ("gdn", "mamba2")]
    if not mamba:
        return block, None, None
    shapes, dtypes = _mamba_state(mamba[0], q)
    mamba_page = MambaSpec(shapes=tuple(shapes), dtypes=dtypes, block_size=-1).page_size_bytes
    full = next(lay for lay in q["layers"] if lay["kind"] in ("full", "mla"))
    attn_1 = _attention_spec(full, q, 1).page_size_bytes
    if q["mamba_cache_mode"] == "all":
        raise ValueError("mamba_cache_mode 'all' needs the model's chunk size")
    block = max(block, block * math.ceil(mamba_page / (block * attn_1)))
    mamba_block = block if q["mamba_cache_mode"] == "align" else q["max_model_len"]
    padded = block * attn_1
    return block, mamba_block, None if padded == mamba_page else padded


def specs(q: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The per-layer KV cache specs of one worker, and the attention block size."""
    from vllm.v1.kv_cache_interface import MambaSpec

    block, mamba_block, padded = _block_sizes(q)
    out: dict[str, Any] = {}
    index = 0
    for layer in q["layers"]:
        for _ in range(layer["count"]):
            name = f"model.layers.{index}.{layer['kind']}"
            index += 1
            if layer["kind"] in ("gdn", "mamba2"):
                shapes, dtypes = _mamba_state(layer, q)
                out[name] = MambaSpec(
                    shapes=tuple(shapes), dtypes=dtypes, block_size=mamba_block,
                    page_size_padded=padded, mamba_cache_mode=q["mamba_cache_mode"],
                    num_speculative_blocks=q["num_speculative_tokens"],
                )  # fmt: skip
            else:
                out[name] = _attention_spec(layer, q, block)
    return out, block


def _configs(q: dict[str, Any], check: bool) -> tuple[Any, Any, int]:
    """vLLM's KV cache config for one worker, with or without its one-request check."""
    from vllm.v1.core import kv_cache_utils as ku

    layer_specs, block = specs(q)
    config = _config(q, block, _block_sizes(q)[1])
    checker = ku._check_enough_kv_cache_memory
    if not check:
        ku._check_enough_kv_cache_memory = lambda *args, **kwargs: None
    try:
        configs = ku.get_kv_cache_configs(config, [layer_specs], [q["available_memory"]])
    finally:
        ku._check_enough_kv_cache_memory = checker
    return config, configs[0], block


def answer(q: dict[str, Any]) -> dict[str, Any]:
    from vllm.v1.core import kv_cache_utils as ku

    q = {**q, "by_block_stride": _by_block_stride(q.get("attention_backend"))}
    refusal, longest = None, None
    try:
        config, kv, block = _configs(q, check=True)
    except ValueError as exc:  # vLLM's own refusal: one request does not fit
        refusal = str(exc).splitlines()[0]
        found = re.search(r"estimated maximum model length is (\d+)", refusal)
        longest = int(found.group(1)) if found else 0
        if q["available_memory"] <= 0:
            return {"boots": False, "refusal": refusal, "num_blocks": 0, "tokens": 0,
                    "concurrency": 0.0, "block_bytes": 0, "longest": 0}  # fmt: skip
        config, kv, block = _configs(q, check=False)
    tokens, concurrency = ku.get_kv_cache_capacity(config, kv)
    per_block = sum(t.size for t in kv.kv_cache_tensors) // max(kv.num_blocks, 1)
    out = {
        "boots": refusal is None,
        "num_blocks": kv.num_blocks,
        "tokens": int(tokens),
        "concurrency": float(concurrency),
        "block_size": block,
        "block_bytes": per_block,
        "groups": [len(g.layer_names) for g in kv.kv_cache_groups],
    }
    if refusal is not None:
        out.update(refusal=refusal, longest=longest)
    return out


def main() -> None:
    from vllm import platforms
    from vllm.platforms.cpu import CpuPlatform

    platforms.current_platform = CpuPlatform()
    queries = json.load(sys.stdin)["queries"]
    answers = []
    for q in queries:
        try:
            answers.append(answer(q))
        except Exception as exc:  # one query vLLM cannot size: said, the others answered
            answers.append({"error": f"{type(exc).__name__}: {exc}"})
    json.dump({"answers": answers}, sys.stdout)


if __name__ == "__main__":
    main()
