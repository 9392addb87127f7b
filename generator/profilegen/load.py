"""Reads registry YAML files into plain data while remembering the line of every node."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from .errors import FindingSink, Location

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
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    return yaml


def _plain(node: Any, path: NodePath, lines: dict[NodePath, int]) -> Any:
    """Turns ruamel's round-trip nodes into dicts/lists, recording 1-based lines."""
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            child = (*path, str(key))
            try:
                line, _col = node.lc.key(key)
                lines[child] = line + 1
            except (KeyError, TypeError, AttributeError):
                lines[child] = lines.get(path, 1)
            out[str(key) if isinstance(key, str) else key] = _plain(value, child, lines)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            try:
                line, _col = node.lc.item(index)
                lines[child] = line + 1
            except (KeyError, TypeError, AttributeError, IndexError):
                lines[child] = lines.get(path, 1)
            items.append(_plain(value, child, lines))
        return items
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def _mark_line(error: MarkedYAMLError) -> int | None:
    mark = error.problem_mark or error.context_mark
    return None if mark is None else mark.line + 1


def parse_text(text: str, display: str, sink: FindingSink, path: Path | None = None) -> Document | None:
    """Parses YAML text; every syntax problem becomes a located finding."""
    where = Location(display, 1)
    try:
        node = _yaml().load(text)
    except DuplicateKeyError as exc:
        key = (exc.problem or "").split('"')[1] if '"' in (exc.problem or "") else ""
        first = exc.context_mark.line + 1 if exc.context_mark else None
        sink.add(
            Location(display, _mark_line(exc)),
            f"duplicate key {key!r}".replace(" ''", ""),
            hint=f"first defined on line {first}; keep one" if first else "keep one",
        )
        return None
    except MarkedYAMLError as exc:
        problem = exc.problem or exc.context or "malformed YAML"
        sink.add(Location(display, _mark_line(exc)), f"malformed YAML: {problem}")
        return None
    except YAMLError as exc:
        sink.add(where, f"malformed YAML: {exc}")
        return None
    lines: dict[NodePath, int] = {(): 1}
    data = _plain(node, (), lines)
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
