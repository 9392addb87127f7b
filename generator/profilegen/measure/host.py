"""`verify --host`: what this host must offer before `docker compose up` can start the profile:
its GPUs and driver, the NVIDIA container toolkit, free memory for what fit predicts, and every
host path the compose mounts."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from ..errors import ProfilegenError
from ..explain.interpolate import interpolate_all
from ..fit.options import FitOptions
from ..fit.predict import fit_profile
from ..model import Profile
from ..registry import Registry
from ..render import render_profile
from ..units import GIB
from .machine import Machine, read_machine

TOOLKIT = ("nvidia-ctk", "nvidia-container-cli", "nvidia-container-runtime-hook")
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")


@dataclass(frozen=True)
class HostCheck:
    name: str  # gpus, toolkit, vram, mount
    ok: bool
    detail: str


def check_host(
    registry: Registry, profile: Profile, model_dir: Path, env: dict[str, str] | None = None
) -> list[HostCheck]:
    env = dict(os.environ if env is None else env)
    machine, how = read_machine()
    need = registry.rigs[profile.rig]
    gpus = profile.envelope.tp * (profile.envelope.pp or 1)
    out = [_gpus(machine, how, need.count, gpus, registry.gpus[need.gpu].name)]
    out.append(_toolkit())
    if machine is not None:
        out += _vram(registry, profile, machine, gpus)
    out += _mounts(registry, profile, model_dir, env)
    return out


def _gpus(machine: Machine | None, how: str, rig_count: int, gpus: int, rig_gpu: str) -> HostCheck:
    if machine is None:
        return HostCheck("gpus", False, f"no GPU found: {how}")
    names = ", ".join(dict.fromkeys(c.name for c in machine.cards))
    seen = (
        f"{len(machine.cards)}x {names}, driver {machine.driver or 'unknown'} ({machine.read_by})"
    )
    if len(machine.cards) < gpus:
        return HostCheck("gpus", False, f"{seen}: the profile runs on {gpus} GPUs")
    return HostCheck("gpus", True, f"{seen}; the profile's rig is {rig_count}x {rig_gpu}")


def _toolkit() -> HostCheck:
    """Compose hands the GPUs to the container through the NVIDIA container toolkit."""
    found = [f"{name} at {path}" for name in TOOLKIT if (path := shutil.which(name))]
    runtimes = _docker_runtimes()
    specs = sorted(
        str(p) for d in CDI_DIRS for p in Path(d).glob("*") if p.suffix in (".yaml", ".json")
    )
    if "nvidia" in runtimes:
        found.append("docker's nvidia runtime")
    if specs:
        found.append(f"CDI spec {specs[0]}")
    if found:
        return HostCheck("toolkit", True, "NVIDIA container toolkit: " + "; ".join(found))
    return HostCheck(
        "toolkit",
        False,
        "no NVIDIA container toolkit (none of " + ", ".join(TOOLKIT) + " on PATH, no nvidia "
        "runtime in `docker info`, no CDI spec): the container would get no GPU; install "
        "nvidia-container-toolkit",
    )


def _docker_runtimes() -> str:
    docker = shutil.which("docker")
    if docker is None:
        return ""
    try:
        proc = subprocess.run([docker, "info", "--format", "{{json .Runtimes}}"],
                              capture_output=True, text=True, timeout=15, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout if proc.returncode == 0 else ""


def _vram(registry: Registry, profile: Profile, machine: Machine, gpus: int) -> list[HostCheck]:
    """Each card the profile uses has the memory free that fit predicts it takes."""
    try:
        fit = fit_profile(registry, profile, FitOptions())
    except ProfilegenError as exc:
        return [HostCheck("vram", False, f"fit cannot predict this profile: {exc}")]
    per_card = max(fit.budget.get("claimed_by_util", 0), fit.used_bytes // max(fit.gpus, 1))
    out = []
    for i, card in enumerate(machine.cards[:gpus]):
        if card.free_bytes is None:
            out.append(HostCheck("vram", False, f"GPU {i}: free memory unknown"))
            continue
        enough = card.free_bytes >= per_card
        out.append(HostCheck(
            "vram", enough,
            f"GPU {i}: {card.free_bytes / GIB:.1f} GiB free, fit predicts {per_card / GIB:.1f} GiB"
            + ("" if enough else "; free the card (another server?) or lower the profile's memory"),
        ))  # fmt: skip
    return out


def _mounts(
    registry: Registry, profile: Profile, model_dir: Path, env: dict[str, str]
) -> list[HostCheck]:
    """Host paths the compose binds: absolute ones must exist (Compose would otherwise make an
    empty folder there); relative ones live in the bundle, which `render -o` and Compose make."""
    env = {**env, "MODEL_DIR": str(model_dir)}
    compose = YAML(typ="safe").load(render_profile(registry, profile).compose)
    out = []
    for service in (compose.get("services") or {}).values():
        mounts = interpolate_all(service, env).get("volumes") or []
        for mount in mounts:
            if not isinstance(mount, dict) or mount.get("type") != "bind":
                continue
            source = str(mount.get("source", ""))
            if source == str(model_dir):
                ok = model_dir.is_dir()
                out.append(HostCheck("mount", ok, f"{source} (MODEL_DIR) -> {mount.get('target')}: "
                                     + ("present" if ok else "missing; run `profilegen fetch`")))  # fmt: skip
            elif source.startswith("/"):
                ok = Path(source).exists()
                why = (
                    "present"
                    if ok
                    else (
                        "missing: Compose would mount an empty folder in its place; install it, or "
                        "point the variable that names it at it (see .env.example)"
                    )
                )
                out.append(HostCheck("mount", ok, f"{source} -> {mount.get('target')}: {why}"))
    return out


def summary(checks: list[HostCheck]) -> dict[str, Any]:
    return {"ok": all(c.ok for c in checks), "checks": [c.__dict__ for c in checks]}
