"""Turns pydantic validation errors into located findings with helpful hints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import FindingSink, Location, hide_credentials, suggest

LocateFn = Callable[[tuple[str | int, ...]], Location]


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """Follows pydantic's loc through the data, dropping union/validator tags."""
    path: list[str | int] = []
    node = data
    for part in loc:
        in_map = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_map or in_list:
            path.append(part)
            node = node[part]
    return tuple(path)


def _fields_at(model: type[BaseModel], data: Any, path: tuple[str | int, ...]) -> list[str]:
    """Field names of the (sub)model that holds an unknown key, for suggestions."""
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(str(part))
        if field is None:
            return []
        current = _inner_model(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _inner_model(annotation: Any) -> Any:
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _key_of_rule(
    data: Any, path: tuple[str | int, ...], msg: str
) -> tuple[tuple[str | int, ...], str]:
    """Moves a model-level error to the key its message starts with, when that key exists."""
    head, sep, rest = msg.partition(": ")
    if not sep:
        return path, msg
    node = data
    for part in path:
        node = node[part]
    target = list(path)
    for part in head.split("."):
        if not (isinstance(node, dict) and part in node):
            return path, msg if not _is_key_name(head) else rest
        target.append(part)
        node = node[part]
    return tuple(target), rest


def _is_key_name(text: str) -> bool:
    return all(p.isidentifier() for p in text.split("."))


def _describe(value: Any) -> str:
    """The value an error quotes, a URL's credentials hidden (a CI log is read by others)."""
    text = hide_credentials(repr(value))
    return text if len(text) <= 60 else text[:57] + "..."


def report_validation(
    error: ValidationError,
    model: type[BaseModel],
    data: Any,
    locate: LocateFn,
    sink: FindingSink,
) -> None:
    """Adds one finding per pydantic error, each at the line of the offending node."""
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for item in error.errors(include_url=False):
        loc = tuple(item["loc"])
        path = _data_path(data, loc)
        dotted = ".".join(str(p) for p in path) or "(document)"
        kind = item["type"]
        hint: str | None = None
        if kind == "extra_forbidden":
            key = str(path[-1]) if path else str(loc[-1])
            message = f"unknown key {key!r}"
            choices = _fields_at(model, data, path[:-1])
            close = suggest(key, choices)
            hint = (
                f"did you mean {close!r}?"
                if close
                else ("allowed keys: " + ", ".join(choices) if choices else None)
            )
        elif kind == "missing":
            key = str(loc[-1])
            message = f"missing required key {key!r}" + (f" in {dotted}" if path else "")
        else:
            msg = str(item["msg"]).removeprefix("Value error, ")
            if kind == "value_error":
                # Model-level rules name the key they are about first ("key: message").
                path, msg = _key_of_rule(data, path, msg)
                dotted = ".".join(str(p) for p in path) or "(document)"
            got = f" (got {_describe(item['input'])})" if kind != "value_error" else ""
            message = f"{dotted}: {msg}{got}"
        if (path, message) in seen:
            continue
        seen.add((path, message))
        sink.add(locate(path), message, hint=hint, path=dotted)
