"""The fit constants that measured boots calibrate, and nothing else.

Every value here stands for one engine mechanism the registry's facts cannot give (a
runtime's own buffers, allocator slack): never a model or a profile. Each is fitted to the
evidence records that name it in `fitted:` (`profilegen fit calibration` refits it from
them, reports those records as `fitted` rather than as predictions, and checks the value
below still matches; `--leave-one-out` refits without each record and predicts it).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ...units import MIB


@dataclass(frozen=True)
class Constants:
    """Calibrated bytes per GPU; formulas take them as an input so they can be refitted."""

    # vLLM: non-torch memory its profiler charges besides weights, activations and graphs
    # (cuBLAS/FlashInfer workspaces, the sampler, the first CUDA-graph capture's pool).
    vllm_runtime_overhead: int = 1199 * MIB
    # vLLM V1 runner: the CUDA-graph estimate per captured batch size and decoder layer
    # (FULL_AND_PIECEWISE on hybrids: both modes per size).
    vllm_cudagraph_per_layer_size: int = 368 * 1024
    # vLLM free-memory accounting (v0.27+): caching-allocator slack and buffers its profiler
    # now charges, when the weights go through Marlin's 4-bit repack (INT4 W4A16/W4A8, and
    # NVFP4 on GPUs without FP4 cores) ...
    vllm_free_memory_slack_marlin4: int = 996 * MIB
    # ... and on every other weight path (FP8 through Marlin, native kernels, bf16).
    vllm_free_memory_slack_other: int = 244 * MIB
    # vLLM with a KV connector (LMCache's MP server in the same container): GPU memory it
    # takes while vLLM profiles, charged as non-torch growth.
    vllm_kv_connector_overhead: int = 794 * MIB
    # llama.cpp: what nvidia-smi counts beyond its logged buffers (CUDA context, cuBLAS,
    # the VMM pool and CUDA graphs).
    llamacpp_runtime_overhead: int = 349 * MIB
    # SGLang: GPU memory gone before its start-up free-memory reading (CUDA context,
    # torch.distributed/NCCL and custom all-reduce buffers).
    sglang_startup_overhead: int = 312 * MIB

    def with_value(self, name: str, value: int) -> Constants:
        return replace(self, **{attribute(name): value})

    def value(self, name: str) -> int:
        result: int = getattr(self, attribute(name))
        return result


DEFAULT_CONSTANTS = Constants()
# The names evidence records use in `fitted:` (the attribute with dashes).
CONSTANT_NAMES: tuple[str, ...] = tuple(f.name.replace("_", "-") for f in fields(Constants))


def attribute(name: str) -> str:
    if name not in CONSTANT_NAMES:
        raise ValueError(f"unknown fit constant {name!r}")
    return name.replace("-", "_")
