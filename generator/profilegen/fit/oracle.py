"""Which code sizes a vLLM pool: the release's own `get_kv_cache_configs`, where a command
has made it available, else the hand formulas (fit/formulas/vllm_pool.py), said.

fit imports no vLLM and runs no process: a command that has the vLLM environment
(`releases/vllm_env.py`) installs a sizer here for the release it holds
(`facts/kv_pool.py` runs the probe and keeps its answers by input), and `fit` asks it for
every profile on that release. `check` installs none: it judges offline with the hand
formulas, which the suite holds to vLLM's own answers on every vLLM profile.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..model import Engine
from . import formulas as fm


@dataclass(frozen=True)
class ReleaseSizer:
    """vLLM's own pool sizing, for engines of one release."""

    version: str  # the release whose code answers ("0.27.1")
    size: fm.PoolSizer


_STATE: dict[str, ReleaseSizer | None] = {"sizer": None, "missing": None}
_WHY: dict[str, str] = {}


@contextmanager
def vllm_sizing(sizer: ReleaseSizer | None, why_not: str = "") -> Iterator[None]:
    """Within the block, fit asks `sizer` for the pools of its release (None: why not)."""
    before, before_why = _STATE["sizer"], dict(_WHY)
    _STATE["sizer"] = sizer
    _WHY.clear()
    if why_not:
        _WHY["why"] = why_not
    try:
        yield
    finally:
        _STATE["sizer"] = before
        _WHY.clear()
        _WHY.update(before_why)


def sizer_for(engine: Engine | None, patched_grouping: bool) -> tuple[fm.PoolSizer | None, str]:
    """The sizer for this engine's release, or None and why the hand formulas answer."""
    sizer = _STATE["sizer"]
    if sizer is None:
        return None, _WHY.get("why", "")
    version = engine.version if engine is not None else None
    if not version:
        return None, "the engine names no vLLM release whose code could size it"
    if version != sizer.version:
        return None, f"vLLM's own code is at hand for {sizer.version} only, not {version}"
    if patched_grouping:
        return (
            None,
            "a patch changes vLLM's KV-cache grouping (prefer-padding-sliding-window-groups)",
        )
    return sizer.size, ""
