"""Kubernetes objects as YAML: every key and string quoted unless it can only be read as itself.

The objects are built as plain data in Python; this module lays them out (block style, one
document per object) with the project's quoting, and reads the result back to prove it
parses to exactly the objects intended. Kubernetes reads YAML 1.1: `yes`, `on`, `0777` or
`1:20` are not strings there, so every scalar that is not a plain identifier is quoted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ..context import RenderError
from ..quoting import YAML_KEYWORDS, comment_lines, yaml_block, yaml_string
from ..verify import first_difference

# Plain scalars: identifiers, label keys (`app.kubernetes.io/name`) and image-like words; a
# leading digit, `/` or any other indicator, or a YAML 1.1 keyword is quoted instead.
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")


@dataclass(frozen=True)
class Block:
    """A multi-line string (a script), written as a literal block where that round-trips."""

    text: str


def kube_escape(text: str) -> str:
    """Kubernetes expands `$(VAR)` in env values, command and args; `$$` is one `$`."""
    return text.replace("$", "$$")


def quote(text: str) -> str:
    """A YAML scalar that every YAML 1.1 and 1.2 reader reads back as exactly `text`."""
    if _PLAIN.fullmatch(text) and text.lower() not in YAML_KEYWORDS:
        return text
    return yaml_string(text)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return quote(value)
    raise RenderError(f"cannot write {type(value).__name__} into a Kubernetes object")


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, Mapping | list | tuple | Block) or not value


def _leaf(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return _scalar(value)


def _mapping(node: Mapping[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for key, value in node.items():
        head = f"{pad}{quote(str(key))}:"
        if isinstance(value, Block):
            lines.append(f"{head} {yaml_block(value.text, indent + 2, compose=False).text}")
        elif _is_leaf(value):
            lines.append(f"{head} {_leaf(value)}")
        elif isinstance(value, Mapping):
            lines += [head, *_mapping(value, indent + 2)]
        else:
            lines += [head, *_sequence(value, indent + 2)]
    return lines


def _sequence(items: Sequence[Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for item in items:
        if isinstance(item, Block):
            raise RenderError("a block scalar cannot be a list item here")
        if _is_leaf(item):
            lines.append(f"{pad}- {_leaf(item)}")
            continue
        inner = (
            _mapping(item, indent + 2) if isinstance(item, Mapping) else _sequence(item, indent + 2)
        )
        lines += [f"{pad}- {inner[0][indent + 2 :]}", *inner[1:]]
    return lines


def dump_objects(objects: Sequence[Mapping[str, Any]], header: str = "") -> str:
    """A multi-document YAML stream, one object per document, an optional comment header."""
    docs = ["\n".join(_mapping(obj, 0)) + "\n" for obj in objects]
    head = comment_lines(header.rstrip("\n")) + "\n" if header else ""
    return head + "".join(f"---\n{doc}" for doc in docs)


def plain(value: Any) -> Any:
    """The objects as a YAML parser reads them back (blocks become their text)."""
    if isinstance(value, Block):
        return value.text
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


# A client-side `kubectl apply` copies the object (as compact JSON) into the annotation
# kubectl.kubernetes.io/last-applied-configuration; the API server refuses an object whose
# annotations add up to more than 256 KiB.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ANNOTATIONS_LIMIT = 256 * 1024


def applied_size(obj: Mapping[str, Any]) -> int:
    """Bytes of annotations the object carries once a client-side apply has written it."""
    own = plain(obj).get("metadata", {}).get("annotations", {})
    copy = json.dumps(plain(obj), separators=(",", ":"), ensure_ascii=False)
    sizes = [len(k.encode()) + len(str(v).encode()) for k, v in own.items()]
    return sum(sizes) + len(LAST_APPLIED) + len(copy.encode())


def verify_objects(label: str, text: str, objects: Sequence[Mapping[str, Any]]) -> None:
    """Raises RenderError unless `text` parses back to exactly `objects`, in order."""
    try:
        docs = [d for d in YAML(typ="safe").load_all(text) if d is not None]
    except YAMLError as exc:
        raise RenderError(f"{label}: rendered Kubernetes YAML does not parse: {exc}") from exc
    want = [plain(obj) for obj in objects]
    if len(docs) != len(want):
        raise RenderError(f"{label}: {len(docs)} documents rendered, {len(want)} intended")
    for got, intended in zip(docs, want, strict=True):
        name = f"{intended.get('kind')}/{intended.get('metadata', {}).get('name')}"
        problem = first_difference(intended, got)
        if problem:
            raise RenderError(f"{label}: {name} differs from what was intended: {problem}")
        size = applied_size(intended)
        if size > ANNOTATIONS_LIMIT:
            raise RenderError(
                f"{label}: {name} would carry {size:,} bytes of annotations after a client-side "
                f"`kubectl apply`, over the API server's {ANNOTATIONS_LIMIT:,}"
            )
