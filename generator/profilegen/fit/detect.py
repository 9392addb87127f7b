"""The local GPUs, read through NVML (optional nvidia-ml-py) and matched to registry GPUs."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..errors import UsageError
from ..model import Gpu, Rig
from ..model.rig import Interconnect
from ..registry import Registry
from ..units import GIB

# NVML reports a card's exact memory (24,576 MiB for a 3090, 32,607 MiB for a 5090); a
# registry entry within this share of it is the same card.
VRAM_TOLERANCE = 0.05
INSTALL_HINT = "pip install 'profilegen[nvml]' (the nvidia-ml-py package)"


class DetectError(UsageError):
    """The local GPUs cannot be read, or match no registry GPU."""


@dataclass(frozen=True)
class LocalGpu:
    index: int
    name: str
    vram_bytes: int
    used_bytes: int


def _nvml() -> ModuleType:
    # Imported here, not at the top: NVML is optional and only --detect needs it.
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        raise DetectError(f"--detect reads the GPUs through NVML: {INSTALL_HINT}") from None


def read_gpus() -> list[LocalGpu]:
    """Every GPU the NVIDIA driver reports, in NVML order."""
    nvml = _nvml()
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        raise DetectError(f"NVML cannot start ({exc}): no NVIDIA driver or GPU here?") from None
    try:
        gpus = []
        for i in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            name = nvml.nvmlDeviceGetName(handle)
            # Releases of nvidia-ml-py before 11.515 return bytes.
            name = name.decode() if isinstance(name, bytes) else str(name)
            mem = nvml.nvmlDeviceGetMemoryInfo(handle)
            gpus.append(LocalGpu(i, name, int(mem.total), int(mem.used)))
    except nvml.NVMLError as exc:
        raise DetectError(f"NVML could not read the GPUs ({exc})") from None
    finally:
        nvml.nvmlShutdown()
    if not gpus:
        raise DetectError("NVML reports no GPU")
    return gpus


def _words(text: str) -> str:
    # "NVIDIA GeForce RTX 3090" and the id "rtx-3090" both become "rtx 3090".
    skip = {"nvidia", "geforce"}
    return " ".join(w for w in text.lower().replace("-", " ").split() if w not in skip)


def match_gpu(registry: Registry, local: LocalGpu) -> Gpu | None:
    """The registry GPU with this name (or id) whose memory agrees with NVML's."""
    want = _words(local.name)
    for gpu in sorted(registry.gpus.values(), key=lambda g: g.id):
        same_name = want in (_words(gpu.name), _words(gpu.id))
        if same_name and abs(gpu.vram.bytes / local.vram_bytes - 1) <= VRAM_TOLERANCE:
            return gpu
    return None


def detect_rig(registry: Registry, local: list[LocalGpu] | None = None) -> Rig:
    """A rig of the local cards, for `list --detect` (mixed cards are listed card by card)."""
    local = read_gpus() if local is None else local
    matched: list[Gpu] = []
    for card in local:
        gpu = match_gpu(registry, card)
        if gpu is None:
            known = ", ".join(f"{g.name} ({g.vram})" for g in registry.gpus.values())
            raise DetectError(
                f"GPU {card.index} ({card.name}, {card.vram_bytes / GIB:.1f} GiB) matches no "
                f"registry GPU (known: {known}); add it under registry/gpus/"
            )
        matched.append(gpu)
    n = len(matched)
    ids = [g.id for g in matched]
    smallest = min(matched, key=lambda g: (g.vram.bytes, g.id))
    mixed = len(set(ids)) > 1
    name = " + ".join(g.name for g in matched) if mixed else f"{n} x {smallest.name}"
    # NVML can tell NVLink apart, but the fit does not depend on the interconnect.
    link = Interconnect(kind="single") if n == 1 else Interconnect(kind="pcie")
    return Rig(
        id="detected",
        name=f"{name} (NVML)",
        gpu=smallest.id,
        count=n,
        cards=ids if mixed else [],
        interconnect=link,
    )
