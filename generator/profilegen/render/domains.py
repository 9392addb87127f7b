"""What a tunable may be set to at boot: the same bounds and choices the registry schema has.

One source: a tunable reads the profile field it overrides (`profile.envelope.tp`), and the
field's pydantic constraints (gt/ge/lt/le, Literal choices) become the boot-time check. The
KV-cache types come from the engine build's list. So whatever `check` accepts as a default
boots, and whatever the schema accepts is not refused at boot either.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, Union

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..model import Engine, Profile

# Properties a tunable may read, and the field whose constraints apply to them.
PROPERTY_FIELDS = {"context_flag": "max_model_len"}
KV_FIELDS = frozenset({"kv_cache_dtype", "kv_cache_dtype_v"})


@dataclass(frozen=True)
class Domain:
    """Bounds (None: unbounded) and, for words, the accepted values (empty: any)."""

    low: float | None = None
    low_open: bool = False
    high: float | None = None
    high_open: bool = False
    choices: tuple[str, ...] = ()

    @property
    def bounded(self) -> bool:
        return self.low is not None or self.high is not None

    def words(self) -> tuple[str, str, str, str]:
        """The bounds as `pg_range` takes them: gt|ge|- LOW lt|le|- HIGH."""
        low = (
            ("gt" if self.low_open else "ge", f"{self.low:g}")
            if self.low is not None
            else ("-", "0")
        )
        high = (
            ("lt" if self.high_open else "le", f"{self.high:g}")
            if self.high is not None
            else ("-", "0")
        )
        return (*low, *high)

    def describe(self) -> str:
        """`> 0`, `>= -1 and <= 2`: the bounds for people."""
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {self.high:g}")
        return " and ".join(parts)


def domain_of(field: str | None, engine: Engine) -> Domain:
    """The domain of `profile.a.b` (unknown paths and engine fields: no constraint)."""
    if not field or not field.startswith("profile."):
        return Domain()
    if field.rsplit(".", 1)[-1] in KV_FIELDS and engine.kv_cache_dtypes:
        return Domain(choices=tuple(engine.kv_cache_dtypes))
    return _field_domain(field)


@cache
def _field_domain(field: str) -> Domain:
    """The domain the Profile model gives `profile.a.b` (the same for every engine)."""
    names = field.split(".")[1:]
    annotation: Any = Profile
    info: FieldInfo | None = None
    for name in names:
        model = _model_in(annotation)
        if model is None:
            return Domain()
        name = PROPERTY_FIELDS.get(name, name)
        info = model.model_fields.get(name)
        if info is None:
            return Domain()
        annotation = info.annotation
    return _domain(annotation, list(info.metadata) if info else [])


def _model_in(annotation: Any) -> type[BaseModel] | None:
    for candidate in _alternatives(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _alternatives(annotation: Any) -> list[Any]:
    """The members of a union (X | None), each with Annotated unwrapped into (type, meta)."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return [a for arg in typing.get_args(annotation) for a in _alternatives(arg)]
    if origin is Annotated:
        return _alternatives(typing.get_args(annotation)[0])
    return [annotation]


def _metadata(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _metadata(arg)]
    if origin is Annotated:
        base, *extra = typing.get_args(annotation)
        found = _metadata(base)
        for item in extra:
            found += list(item.metadata) if isinstance(item, FieldInfo) else [item]
        return found
    return []


def _domain(annotation: Any, metadata: list[Any]) -> Domain:
    bounds: dict[str, Any] = {}
    for item in [*metadata, *_metadata(annotation)]:
        if isinstance(item, annotated_types.Gt):
            bounds.update(low=float(item.gt), low_open=True)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Ge):
            bounds.update(low=float(item.ge), low_open=False)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Lt):
            bounds.update(high=float(item.lt), high_open=True)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Le):
            bounds.update(high=float(item.le), high_open=False)  # type: ignore[arg-type]
    choices = tuple(
        str(value)
        for alternative in _alternatives(annotation)
        if typing.get_origin(alternative) is Literal
        for value in typing.get_args(alternative)
        if isinstance(value, str)
    )
    return Domain(choices=choices, **bounds)
