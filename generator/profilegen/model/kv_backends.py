"""Which KV-cache dtypes a GPU's attention backend takes: the one judge of that fact.

`fit`, `check`, `new`, `explain` and the entrypoint's guard all ask `kv_dtype_decision`.
The engine's release lists the dtypes it knows (`Engine.kv_cache_dtypes`, from its
`--kv-cache-dtype` choices); an engine whose attention backends limit the dtype per GPU
(vLLM: `families.Family.kv_by_attention_backend`) takes a dtype only where the backend does,
as the GPU's `kv_dtypes_by_backend` table says. With no backend named, vLLM tries its
backends in priority order and takes the first that accepts the dtype
(`platforms/cuda.py` `_get_backend_priorities`: FLASH_ATTN, FLASHINFER, TRITON_ATTN on every
card but sm 10.x, where FLASHINFER comes first); the GPU's table lists its backends in that
order, so the default backend for a dtype is the first entry that takes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..families import family
from .engine import Engine
from .gpu import Gpu


@dataclass(frozen=True)
class KvDecision:
    """Whether the container boots with a KV dtype, and which backend serves it."""

    ok: bool
    dtype: str  # the dtype asked ('auto' when unset)
    backend: str | None  # the backend named, or the one the engine picks; None: no table
    picked: bool  # True: no backend was named and the engine picks `backend`
    reason: str  # why it is refused (empty when ok)
    takes: tuple[str, ...] = ()  # what the named backend (or the engine) takes

    def said(self) -> str:
        """One line for a person: what serves the dtype, or why nothing does."""
        if not self.ok:
            return self.reason
        if self.backend is None:
            return f"KV dtype {self.dtype}"
        how = "picked by the engine" if self.picked else "named by the profile"
        return f"KV dtype {self.dtype} on {self.backend} ({how})"


def default_backend(gpu: Gpu, dtype: str) -> str | None:
    """The backend vLLM picks for `dtype` on `gpu` when none is named (None: none takes it)."""
    return next((b for b, takes in gpu.kv_dtypes_by_backend.items() if dtype in takes), None)


def accepted_dtypes(engine: Engine, gpu: Gpu, backend: str | None) -> tuple[str, ...]:
    """The KV dtypes the container takes on `gpu` with `backend` (None: the engine picks)."""
    known = tuple(engine.kv_cache_dtypes)
    table = gpu.kv_dtypes_by_backend
    if not family(engine.kind).kv_by_attention_backend or not table:
        return known
    if backend is not None and backend not in table:
        return known  # a backend the GPU's table does not list: only the engine judges
    pool = table[backend] if backend is not None else [d for ds in table.values() for d in ds]
    if not known:
        return tuple(dict.fromkeys(pool))
    return tuple(d for d in known if d in pool)


def kv_dtype_decision(
    engine: Engine, gpu: Gpu, dtype: str | None, backend: str | None
) -> KvDecision:
    """Whether `engine` on `gpu` boots with KV `dtype` (None: its default) and `backend`."""
    asked = dtype or family(engine.kind).default_kv_dtype
    known = engine.kv_cache_dtypes
    if known and asked not in known:
        reason = f"{engine.kind} {engine.version} has no KV dtype {asked!r}"
        return KvDecision(False, asked, backend, False, reason, tuple(known))
    table = gpu.kv_dtypes_by_backend
    if not family(engine.kind).kv_by_attention_backend or not table:
        return KvDecision(True, asked, None, False, "", tuple(known))
    if backend is not None:
        takes = table.get(backend)
        if takes is None:  # not in the table: nothing known against it
            return KvDecision(True, asked, backend, False, "", tuple(known))
        if asked in takes:
            return KvDecision(True, asked, backend, False, "", tuple(takes))
        others = [b for b, ds in table.items() if asked in ds]
        hint = f" ({' or '.join(others)} would)" if others else ""
        reason = (
            f"{backend} on {gpu.name} (sm {gpu.sm}) does not take {asked} KV "
            f"(takes: {', '.join(takes)}){hint}"
        )
        return KvDecision(False, asked, backend, False, reason, tuple(takes))
    picked = default_backend(gpu, asked)
    takes_any = accepted_dtypes(engine, gpu, None)
    if picked is None:
        reason = f"no attention backend on {gpu.name} (sm {gpu.sm}) takes {asked} KV"
        return KvDecision(False, asked, None, True, reason, takes_any)
    return KvDecision(True, asked, picked, True, "", takes_any)
