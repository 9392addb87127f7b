"""Reads registry YAML files into plain data while remembering the line of every node."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

from ..errors import FindingSink, Location

NodePath = tuple[str | int, ...]
MODELINE = re.compile(r"^#\s*yaml-language-server:\s*\$schema=(\S+)\s*$")


@dataclass
class Document:
    """One registry file: plain data plus the location of each node in it."""

    path: Path
    display: str
    data: Any
    lines: dict[NodePath, int] = field(default_factory=dict)
    modeline: str | None = None

    def where(self, node: NodePath = ()) -> Location:
        """The closest known line for a node path (falls back to its parents)."""
        probe = tuple(node)
        while probe:
            if probe in self.lines:
                return Location(self.display, self.lines[probe])
            probe = probe[:-1]
        return Location(self.display, self.lines.get((), 1))


def _yaml() -> YAML:
    # The safe loader composes with libyaml (ruamel.yaml.clib) when it is installed:
    # ten times faster than the round-trip loader, and its nodes still carry marks.
    return YAML(typ="safe")


class _Duplicate(Exception):
    def __init__(self, key: str, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


def _plain(yaml: YAML, node: Node, path: NodePath, lines: dict[NodePath, int]) -> Any:
    """Turns composed nodes into dicts/lists/scalars, recording 1-based lines."""
    if isinstance(node, MappingNode):
        out: dict[Any, Any] = {}
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = _plain(yaml, key_node, path, {})
            key = key if isinstance(key, str | int | float | bool) or key is None else str(key)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _Duplicate(str(key), line, seen[key])
            seen[key] = line
            child = (*path, str(key))
            lines[child] = line
            out[str(key) if isinstance(key, str) else key] = _plain(yaml, value_node, child, lines)
        return out
    if isinstance(node, SequenceNode):
        items = []
        for index, value_node in enumerate(node.value):
            child = (*path, index)
            lines[child] = value_node.start_mark.line + 1
            items.append(_plain(yaml, value_node, child, lines))
        return items
    return yaml.constructor.construct_object(node, deep=True)


def _mark_line(error: MarkedYAMLError, text: str) -> int | None:
    # At the end of the stream (an unclosed quote or bracket) the problem mark points
    # past the last line; the context mark says where the construct began.
    at_end = "end of stream" in (error.problem or "")
    mark = (error.context_mark if at_end else None) or error.problem_mark or error.context_mark
    if mark is None:
        return None
    line: int = mark.line
    return min(line + 1, max(1, text.count("\n") + (0 if text.endswith("\n") else 1)))


def parse_text(
    text: str, display: str, sink: FindingSink, path: Path | None = None
) -> Document | None:
    """Parses YAML text; every syntax problem becomes a located finding."""
    yaml = _yaml()
    try:
        node = yaml.compose(text)
        lines: dict[NodePath, int] = {(): 1}
        data = None if node is None else _plain(yaml, node, (), lines)
    except _Duplicate as dup:
        sink.add(
            Location(display, dup.line),
            f"duplicate key {dup.key!r}",
            hint=f"first defined on line {dup.first}; keep one",
        )
        return None
    except MarkedYAMLError as exc:
        problem = exc.problem or exc.context or "malformed YAML"
        sink.add(Location(display, _mark_line(exc, text)), f"malformed YAML: {problem}")
        return None
    except YAMLError as exc:
        sink.add(Location(display, 1), f"malformed YAML: {exc}")
        return None
    first_line = text.split("\n", 1)[0]
    match = MODELINE.match(first_line)
    return Document(
        path=path or Path(display),
        display=display,
        data=data,
        lines=lines,
        modeline=match.group(1) if match else None,
    )


def read_document(path: Path, root: Path, sink: FindingSink) -> Document | None:
    """Reads one registry file; problems are added to the sink, never raised."""
    display = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        sink.add(Location(display), f"cannot read file: {exc.strerror}")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        sink.add(Location(display, line), "file is not valid UTF-8")
        return None
    return parse_text(text, display, sink, path)
