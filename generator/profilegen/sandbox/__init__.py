"""A container-like box on the host: what a registry derives runs here, never on the host itself.

Owns: isolated processes (their own mount, PID and, unless asked, network namespace; the
host's system folders read-only underneath a throw-away layer; no home, work or temporary
folder of the host in view; a clean environment) with the files and bind mounts a container
would have at its paths.
May import: `errors`.
"""

from __future__ import annotations

from .box import (
    Bind,
    Box,
    Completed,
    SandboxError,
    SandboxUnavailable,
    available,
    kill,
    memory_folder,
    run,
    scratch_folder,
    spawn,
)
from .mounts import BindMount, MountPlan, nul, plan_mounts
from .paths import PlacementError

__all__ = [
    "Bind",
    "BindMount",
    "Box",
    "Completed",
    "MountPlan",
    "PlacementError",
    "SandboxError",
    "SandboxUnavailable",
    "available",
    "kill",
    "memory_folder",
    "nul",
    "plan_mounts",
    "run",
    "scratch_folder",
    "spawn",
]
