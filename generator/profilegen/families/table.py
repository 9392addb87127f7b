"""The families profilegen knows: the built-in three, and any a caller registers."""

from __future__ import annotations

from ..errors import ProfilegenError
from .base import Family, FitModel
from .llamacpp import FAMILY as LLAMACPP
from .sglang import FAMILY as SGLANG
from .vllm import FAMILY as VLLM

_TABLE: dict[str, Family] = {f.kind: f for f in (VLLM, LLAMACPP, SGLANG)}


def register(new: Family) -> None:
    """Adds a family (a plug-in, or a test's fixture family); a kind is registered once."""
    known = _TABLE.get(new.kind)
    if known is not None and known != new:
        raise ProfilegenError(f"engine family {new.kind!r} is already registered")
    _TABLE[new.kind] = new


def family(kind: str) -> Family:
    """The family of an engine `kind:` (the registry validates kinds against `kinds()`)."""
    try:
        return _TABLE[kind]
    except KeyError:
        raise ProfilegenError(f"no engine family {kind!r} (known: {', '.join(kinds())})") from None


def fit_model(kind: str) -> FitModel | None:
    """Which memory model fits an engine of `kind` (None: none does)."""
    return family(kind).fit


def kinds() -> tuple[str, ...]:
    """Every registered kind, in registration order (the built-in three first)."""
    return tuple(_TABLE)
