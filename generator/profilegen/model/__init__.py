"""The registry's typed data model, one module per entity (pydantic, strict, frozen).

Owns: what a GPU, rig, engine, model, drafter, patch, profile and gateway are, field by field.
May import: `errors`, `units`, `families` (the model knows nothing of files, rendering or the Hub).
"""

from __future__ import annotations

from .drafter import Drafter
from .engine import Engine
from .gateway import Gateway
from .gpu import Gpu
from .model import Model
from .patch import Patch
from .profile import Profile
from .rig import Rig

__all__ = ["Drafter", "Engine", "Gateway", "Gpu", "Model", "Patch", "Profile", "Rig"]
