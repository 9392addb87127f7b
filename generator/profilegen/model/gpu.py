"""A GPU model: the hardware facts that decide which envelopes are legal on it."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from .common import Id, Size, Strict, Text


class Gpu(Strict):
    id: Id
    name: Text
    vendor: Annotated[str, StringConstraints(pattern=r"^(nvidia|amd|intel)$")] = "nvidia"
    arch: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+$")]
    sm: Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+$")]
    vram: Size
    memory_bandwidth_gbps: Annotated[float, Field(gt=0)] | None = None
    # Peak dense FP16 tensor throughput (FP16 accumulate, no sparsity): with the bandwidth,
    # the ceiling a measured speed is held to (docs/EVIDENCE.md).
    dense_fp16_tflops: Annotated[float, Field(gt=0)] | None = None
    # Which KV-cache dtypes each attention backend accepts on this GPU: a hardware
    # rule kept as data (e.g. on sm 8.6 FLASH_ATTN takes only bf16/fp16 KV).
    kv_dtypes_by_backend: dict[
        Annotated[str, StringConstraints(pattern=r"^[A-Z0-9_]+$")],
        list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+$")]],
    ] = Field(default_factory=dict)
    notes: Text | None = None
