"""Derives the as-written form of a model: every field optional, for files that `extends`."""

from __future__ import annotations

import types
import typing
from typing import Any, Optional, Union

from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

_CACHE: dict[type[BaseModel], type[BaseModel]] = {}


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _loosen(annotation: Any) -> Any:
    """Replaces a nested model (also inside `X | None`) by its partial form."""
    if _is_model(annotation):
        return partial(annotation)
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = tuple(partial(a) if _is_model(a) else a for a in typing.get_args(annotation))
        return Union[args]  # noqa: UP007 (runtime construction)
    return annotation


def partial(
    model: type[BaseModel], *, keep_required: frozenset[str] = frozenset()
) -> type[BaseModel]:
    """A model with the same fields and constraints, each optional (nested models too).

    A profile that extends another states only what differs, so its file is validated
    against this form; the merged result is validated against the full model.
    """
    if model in _CACHE and not keep_required:
        return _CACHE[model]
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        annotation = _loosen(info.annotation)
        copied = FieldInfo.merge_field_infos(info)
        copied.annotation = annotation
        if name in keep_required:
            fields[name] = (annotation, copied)
            continue
        copied.default = None
        copied.default_factory = None
        fields[name] = (Optional[annotation], copied)  # noqa: UP045 (runtime construction)
    derived = create_model(
        f"{model.__name__}File",
        __config__=model.model_config,
        __doc__=f"{model.__name__} as written in a file (every key optional).",
        **fields,
    )
    if not keep_required:
        _CACHE[model] = derived
    return derived
