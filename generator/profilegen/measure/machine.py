"""The machine a bench (or `verify --host`) runs on, as NVML reports it when nvidia-ml-py and a
driver are there, else as `nvidia-smi` does: the cards, their memory, power caps and PCIe
links, NVLink, the driver, and memory in use."""

from __future__ import annotations

import importlib
import shutil
import subprocess
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..fit.detect import LocalGpu, match_gpu
from ..registry import Registry
from ..units import MIB


@dataclass(frozen=True)
class Card:
    name: str
    vram_bytes: int
    free_bytes: int | None
    power_cap_w: float | None
    pcie: str | None  # "Gen4 x16"
    nvlink: bool | None


@dataclass(frozen=True)
class Machine:
    cards: tuple[Card, ...]
    driver: str | None
    read_by: str = "NVML"

    def hardware(self) -> dict[str, Any]:
        """The evidence record's `hardware`."""
        names = list(
            dict.fromkeys(c.name.replace("NVIDIA ", "").replace("GeForce ", "") for c in self.cards)
        )
        out: dict[str, Any] = {"cards": len(self.cards), "gpu": " + ".join(names)}
        links = [c.pcie for c in self.cards if c.pcie]
        if links:
            out["link"] = "PCIe " + "/".join(links)
        linked = [c.nvlink for c in self.cards if c.nvlink is not None]
        if linked:
            out["nvlink"] = any(linked)
        caps = [c.power_cap_w for c in self.cards if c.power_cap_w]
        if caps:
            out["power_cap_w"] = caps[:1] if len(set(caps)) == 1 else caps
        if self.driver:
            out["driver"] = self.driver
        return out

    def registry_rig(self, registry: Registry) -> str | None:
        """The registry rig of exactly these cards (NVLink as NVML sees it), if there is one."""
        gpus = []
        for i, card in enumerate(self.cards):
            gpu = match_gpu(registry, LocalGpu(i, card.name, card.vram_bytes, 0))
            if gpu is None:
                return None
            gpus.append(gpu.id)
        linked = bool(self.hardware().get("nvlink"))
        fits = [
            r
            for r in registry.rigs.values()
            if r.count == len(gpus) and sorted(r.cards or [r.gpu] * r.count) == sorted(gpus)
        ]
        fits.sort(
            key=lambda r: (r.interconnect.nvlink != linked, r.host_os != "linux", len(r.id), r.id)
        )
        return fits[0].id if fits else None


def _nvml() -> ModuleType | None:
    # Optional: without nvidia-ml-py the bench still measures, and records no machine facts.
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


def read_machine() -> tuple[Machine | None, str]:
    """The machine, or None and why not: through NVML, else through `nvidia-smi`."""
    machine, why = _read_nvml()
    if machine is not None:
        return machine, why
    smi, smi_why = _read_smi()
    return (smi, smi_why) if smi is not None else (None, f"{why}; {smi_why}")


SMI_FIELDS = "name,memory.total,memory.free,driver_version,power.limit,pcie.link.gen.current,pcie.link.width.current"


def _read_smi() -> tuple[Machine | None, str]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None, "nvidia-smi is not on PATH"
    try:
        proc = subprocess.run(
            [exe, f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"nvidia-smi did not run ({exc})"
    if proc.returncode != 0:
        return None, f"nvidia-smi failed: {(proc.stderr or proc.stdout).strip()[:200]}"
    cards, driver = [], None
    for line in proc.stdout.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 7:
            continue
        name, total, free, driver, power, gen, width = cells[:7]
        cards.append(Card(
            name=name,
            vram_bytes=int(_number(total) or 0) * MIB,
            free_bytes=int(_number(free) or 0) * MIB if _number(free) is not None else None,
            power_cap_w=_number(power),
            pcie=f"Gen{gen} x{width}" if _number(gen) and _number(width) else None,
            nvlink=None,
        ))  # fmt: skip
    if not cards:
        return None, "nvidia-smi reports no GPU"
    return Machine(tuple(cards), driver, "nvidia-smi"), "read through nvidia-smi"


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"
    return int(value) if value.is_integer() else value


def _read_nvml() -> tuple[Machine | None, str]:
    nvml = _nvml()
    if nvml is None:
        return None, "nvidia-ml-py is not installed (pip install 'profilegen[nvml]')"
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError and its many subclasses
        return None, f"NVML cannot start ({exc})"
    try:
        driver = _call(nvml.nvmlSystemGetDriverVersion)
        cards = tuple(
            _card(nvml, nvml.nvmlDeviceGetHandleByIndex(i))
            for i in range(nvml.nvmlDeviceGetCount())
        )
    except Exception as exc:
        return None, f"NVML could not read the GPUs ({exc})"
    finally:
        _call(nvml.nvmlShutdown)
    if not cards:
        return None, "NVML reports no GPU"
    return Machine(cards, _text(driver) if driver else None), "read through NVML"


def used_mib() -> int | None:
    """GPU memory in use now, summed over the cards (None without NVML)."""
    nvml = _nvml()
    if nvml is None:
        return None
    try:
        nvml.nvmlInit()
        try:
            total = sum(
                int(nvml.nvmlDeviceGetMemoryInfo(nvml.nvmlDeviceGetHandleByIndex(i)).used)
                for i in range(nvml.nvmlDeviceGetCount())
            )
        finally:
            nvml.nvmlShutdown()
    except Exception:
        return None
    return round(total / MIB)


def _card(nvml: ModuleType, handle: Any) -> Card:
    power = _call(nvml.nvmlDeviceGetPowerManagementLimit, handle)
    gen = _call(nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)
    width = _call(nvml.nvmlDeviceGetCurrPcieLinkWidth, handle)
    link = _call(nvml.nvmlDeviceGetNvLinkState, handle, 0)
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    return Card(
        name=_text(nvml.nvmlDeviceGetName(handle)),
        vram_bytes=int(memory.total),
        free_bytes=int(memory.free),
        power_cap_w=round(power / 1000, 1) if isinstance(power, int) else None,
        pcie=f"Gen{gen} x{width}" if gen and width else None,
        nvlink=bool(link) if link is not None else None,
    )


def _call(fn: Any, *args: Any) -> Any:
    """An NVML query a card may not support (NVLink on a card without it): None then."""
    try:
        return fn(*args)
    except Exception:
        return None


def _text(value: Any) -> str:
    # Releases of nvidia-ml-py before 11.515 return bytes.
    return value.decode() if isinstance(value, bytes) else str(value)
