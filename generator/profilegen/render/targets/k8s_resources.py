"""What a pod asks of its node and how long it may take to start, both from the profile.

Memory is what the container holds in host RAM at its worst: the memory-backed /dev/shm
(tmpfs counts against the pod's memory), the load (weights staged through host memory, or
what the profile says offloaded weights need, `envelope.host_ram`), host-side caches
(LMCache's L1, llama.cpp's prompt cache) and the runtime (Python, CUDA contexts, compile
workers). Requests equal limits for CPU and memory in every container, so the pods are of QoS
class Guaranteed: the last a node evicts under memory pressure.

The startup budget is the engine's compile steps (the registry's `startup_budget_s`: torch.compile
and CUDA-graph capture, or a few minutes for an eager profile) plus reading the pod's share of
the weights from the volume; a LeaderWorkerSet leader also waits for its workers to join.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...units import GIB
from ..context import Context
from .k8s_plan import K8sError, Layout

# Weights read from a network volume, and downloaded from the Hub, at a rate most clusters beat.
READ_BYTES_PER_S = 100 * 10**6
DOWNLOAD_BYTES_PER_S = 25 * 10**6
# A node that has not pulled the engine image yet (10-20 GB) before its container starts.
IMAGE_PULL_S = 900
EAGER_START_S = 300
RUNTIME_GIB = 4
GPU_RUNTIME_GIB = 2
CPU_BASE = 2
CPU_PER_GPU = 2
PROBE_PERIOD_S = 10
QOS = "Guaranteed"
# The loader's containers hash and download: a core and a little memory.
LOADER_RESOURCES = {"cpu": "1", "memory": "2Gi"}


def size_bytes(size: str) -> int:
    """Docker's `16gb` (binary units) in bytes."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    number, unit = size.rstrip("b")[:-1], size.rstrip("b")[-1:]
    if not number.isdigit() or unit not in units:
        raise K8sError("shm_size", f"{size!r} is not a size")
    return int(number) * units[unit]


@dataclass(frozen=True)
class Memory:
    """The engine container's host memory, part by part (GiB, rounded up at the end)."""

    parts: tuple[tuple[str, float], ...]

    @property
    def gib(self) -> int:
        return math.ceil(sum(g for _, g in self.parts))

    def describe(self) -> str:
        return " + ".join(f"{label} {g:.1f}" for label, g in self.parts if g) + " GiB"


def engine_memory(ctx: Context, layout: Layout, weights_bytes: int) -> Memory:
    p, gpus = ctx.profile, layout.gpus_per_pod
    shm = size_bytes(p.shm_size) / GIB if ctx.engine.ipc_host else 0.0
    host_ram = p.envelope.host_ram
    load = (host_ram.bytes if host_ram else weights_bytes / layout.nodes) / GIB
    cache = 0.0
    if p.runtime.lmcache is not None:
        cache += p.runtime.lmcache.l1_size_gb * 10**9 / GIB
    if p.runtime.prompt_cache_ram_mib and p.runtime.prompt_cache_ram_mib > 0:
        cache += p.runtime.prompt_cache_ram_mib / 1024
    parts = (
        ("/dev/shm", shm),
        ("offloaded weights" if host_ram else "weights load", load),
        ("host caches", cache),
        ("runtime", float(RUNTIME_GIB + GPU_RUNTIME_GIB * gpus)),
    )
    return Memory(parts)


def engine_cpu(ctx: Context, layout: Layout) -> int:
    base = CPU_BASE + CPU_PER_GPU * layout.gpus_per_pod
    threads = ctx.profile.runtime.threads
    return max(base, threads + 1) if threads else base


def resources(cpu: int | str, memory_gib: int | str, extra: dict[str, int]) -> dict[str, Any]:
    """Requests equal to limits (QoS Guaranteed), extended resources (GPUs) alike."""
    memory = memory_gib if isinstance(memory_gib, str) else f"{memory_gib}Gi"
    amounts: dict[str, Any] = {"cpu": str(cpu), "memory": memory, **extra}
    return {"requests": dict(amounts), "limits": dict(amounts)}


@dataclass(frozen=True)
class Startup:
    """Seconds a pod's engine may take before its health endpoint answers."""

    compile_s: int
    read_s: int
    join_s: int = 0

    @property
    def total_s(self) -> int:
        return self.compile_s + self.read_s + self.join_s

    @property
    def failure_threshold(self) -> int:
        return math.ceil(self.total_s / PROBE_PERIOD_S)

    def describe(self) -> str:
        parts = [
            f"start and compile {self.compile_s // 60} min",
            f"read the weights {self.read_s // 60} min",
        ]
        if self.join_s:
            parts.insert(0, f"workers join {self.join_s // 60} min")
        return f"{math.ceil(self.total_s / 60)} min ({', '.join(parts)})"


def join_budget_s(weights_bytes: int, nodes: int, per_pod_loaders: bool) -> int:
    """How long the pods of a group wait for each other: an image pull, and a peer's own
    download when each pod fills its own volume."""
    download = math.ceil(weights_bytes / DOWNLOAD_BYTES_PER_S) if per_pod_loaders else 0
    return IMAGE_PULL_S + download if nodes > 1 else 0


def startup(ctx: Context, layout: Layout, weights_bytes: int, join_s: int) -> Startup:
    eager = bool(getattr(ctx.profile.envelope, "enforce_eager", False))
    compile_s = EAGER_START_S if eager else ctx.engine.startup_budget_s
    read_s = math.ceil(weights_bytes / layout.nodes / READ_BYTES_PER_S)
    return Startup(compile_s, read_s, join_s)


def probes(ctx: Context, budget: Startup) -> dict[str, Any]:
    """The server's health probes: nothing counts as a failure within the startup budget."""
    check = {"httpGet": {"path": ctx.engine.health_path, "port": "http"}, "timeoutSeconds": 5}
    period = {"periodSeconds": PROBE_PERIOD_S}
    return {
        "startupProbe": {**check, **period, "failureThreshold": budget.failure_threshold},
        "readinessProbe": {**check, **period, "failureThreshold": 3},
        "livenessProbe": {**check, "periodSeconds": 30, "failureThreshold": 4},
    }
