"""Bounded YAML reading: parser events become plain data, with nesting and aliases capped first.

ruamel's composer recurses per nesting level (a 100,000-deep flow list crashes the interpreter)
and expanding an alias copies what it names (a 440-byte alias bomb is gigabytes). Reading the
event stream ourselves checks every limit before the next node is built, so a hostile file
costs a few milliseconds and becomes a finding on the line that broke the limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import ScalarNode

NodePath = tuple[str | int, ...]

# A registry file is a few hundred nodes, at most eight levels deep; these leave ample room.
MAX_DEPTH = 64
MAX_NODES = 50_000  # values in the document once every alias is expanded
MAX_ALIASES = 1_000
# Every number a registry holds is finite and at most this large (the integers a float, JSON
# and Go's float64 hold exactly): sizes in bytes, token counts and ports all fit, with room.
# A larger one overflows a float (1e308 GB in bytes), or hangs a loop, downstream.
MAX_NUMBER = 2**53
_NUMBER_TEXT = 40  # characters; longer literals are refused before they are converted

_CORE = "tag:yaml.org,2002:"
_PLAIN_TAGS = {f"{_CORE}{name}" for name in ("str", "int", "float", "bool", "null")}
_MAP_TAG, _SEQ_TAG, _STR = f"{_CORE}map", f"{_CORE}seq", f"{_CORE}str"
_SAFE = YAML(typ="safe")


class YamlProblem(Exception):
    """Why a document cannot be read, and the 1-based line that says so."""

    def __init__(self, line: int, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.line, self.message, self.hint = line, message, hint


@dataclass
class _Open:
    """A mapping or sequence whose end event has not come yet."""

    value: dict[Any, Any] | list[Any]
    path: NodePath
    anchor: str | None
    nodes_before: int
    key: Any = None
    key_line: int = 0
    has_key: bool = False
    seen: dict[Any, int] = field(default_factory=dict)


@dataclass
class _Reader:
    lines: dict[NodePath, int] = field(default_factory=lambda: {(): 1})
    stack: list[_Open] = field(default_factory=list)
    anchors: dict[str, tuple[Any, int]] = field(default_factory=dict)
    nodes: int = 0
    aliases: int = 0
    documents: int = 0
    root: Any = None

    def feed(self, event: Event) -> None:
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if isinstance(event, DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise YamlProblem(line, "a registry file holds one YAML document, found a second")
        elif isinstance(event, (MappingStartEvent, SequenceStartEvent)):
            self._start(event, line)
        elif isinstance(event, (MappingEndEvent, SequenceEndEvent)):
            done = self.stack.pop()
            if done.anchor is not None:
                self.anchors[done.anchor] = (done.value, self.nodes - done.nodes_before)
            self._attach(done.value, line, located=True)
        elif isinstance(event, ScalarEvent):
            self._count(1, line)
            value = self._scalar(event, line)
            if self._expects_key():
                # Registry keys are names: `1:` or `true:` is the text a person typed.
                value = event.value
            if event.anchor is not None:
                self.anchors[event.anchor] = (value, 1)
            self._attach(value, line, located=False)
        elif isinstance(event, AliasEvent):
            self._alias(event.anchor, line)

    def _expects_key(self) -> bool:
        top = self.stack[-1] if self.stack else None
        return top is not None and isinstance(top.value, dict) and not top.has_key

    def _count(self, nodes: int, line: int) -> None:
        self.nodes += nodes
        if self.nodes > MAX_NODES:
            raise YamlProblem(
                line,
                f"the document expands to more than {MAX_NODES:,} values (an alias bomb?)",
                "registry files are small: write values out instead of nesting aliases",
            )

    def _start(self, event: MappingStartEvent | SequenceStartEvent, line: int) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise YamlProblem(line, f"nesting deeper than {MAX_DEPTH} levels")
        mapping = isinstance(event, MappingStartEvent)
        tag = None if event.tag is None else str(event.tag)
        if tag not in (None, "!", _MAP_TAG if mapping else _SEQ_TAG):
            raise YamlProblem(line, f"tag {_short(tag)} is not allowed in a registry file")
        self._count(1, line)
        parent = self.stack[-1] if self.stack else None
        if parent is not None and isinstance(parent.value, dict) and not parent.has_key:
            raise YamlProblem(line, "a key must be a plain value, not a mapping or a list")
        path = self._child_path(line)
        value: dict[Any, Any] | list[Any] = {} if mapping else []
        self.stack.append(_Open(value, path, event.anchor, self.nodes - 1))

    def _child_path(self, line: int) -> NodePath:
        """The path of the node that starts now (and the line it is reported on)."""
        if not self.stack:
            return ()
        parent = self.stack[-1]
        if isinstance(parent.value, dict):
            path = (*parent.path, str(parent.key))
            self.lines[path] = parent.key_line
        else:
            path = (*parent.path, len(parent.value))
            self.lines[path] = line
        return path

    def _attach(self, value: Any, line: int, *, located: bool) -> None:
        """Places a finished node; `located` when its start already recorded its line."""
        if not self.stack:
            self.root = value
            return
        parent = self.stack[-1]
        if isinstance(parent.value, list):
            if not located:
                item: NodePath = (*parent.path, len(parent.value))
                self.lines[item] = line
            parent.value.append(value)
            return
        if not parent.has_key:
            self._key(parent, value, line)
            return
        child: NodePath = (*parent.path, str(parent.key))
        self.lines[child] = parent.key_line
        parent.value[parent.key] = value
        parent.has_key = False

    def _key(self, parent: _Open, key: Any, line: int) -> None:
        if isinstance(key, (dict, list)):
            raise YamlProblem(line, "a key must be a plain value, not a mapping or a list")
        if key in parent.seen:
            raise YamlProblem(
                line,
                f"duplicate key {str(key)!r}",
                f"first defined on line {parent.seen[key]}; keep one",
            )
        parent.seen[key] = line
        parent.key, parent.key_line, parent.has_key = key, line, True

    def _scalar(self, event: ScalarEvent, line: int) -> Any:
        # ruamel hands out Tag objects, which compare equal to strings but hash differently.
        tag = None if event.tag is None else str(event.tag)
        if tag is None and event.implicit[0]:
            tag = _resolve(event.value)
        elif tag in (None, "!"):
            return event.value  # quoted, or explicitly non-specific: text
        if tag == _STR:
            return event.value
        if tag == f"{_CORE}merge":
            raise YamlProblem(
                line, "merge keys (<<) are not supported in registry files", "use `extends`"
            )
        if tag not in _PLAIN_TAGS:
            # A plain date stays text (evidence dates are validated as text); `=` is text too.
            if event.tag is None and tag in (f"{_CORE}timestamp", f"{_CORE}value"):
                return event.value
            raise YamlProblem(line, f"tag {_short(tag)} is not allowed in a registry file")
        numeric = tag in (f"{_CORE}int", f"{_CORE}float")
        if numeric and len(event.value) > _NUMBER_TEXT:
            raise _out_of_range(line, event.value)
        try:
            value = _construct(tag, event.value)
        except Exception as exc:  # a value its tag cannot hold (`!!int abc`)
            raise YamlProblem(line, f"cannot read {event.value!r} as {tag[len(_CORE) :]}") from exc
        if numeric and not (isinstance(value, int) or math.isfinite(value)):
            raise _out_of_range(line, event.value)
        if numeric and abs(value) > MAX_NUMBER:
            raise _out_of_range(line, event.value)
        return value

    def _alias(self, anchor: str, line: int) -> None:
        if any(frame.anchor == anchor for frame in self.stack):
            raise YamlProblem(line, f"alias *{anchor} refers to a node that contains it")
        if anchor not in self.anchors:
            raise YamlProblem(line, f"alias *{anchor} names no anchor defined before it")
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            raise YamlProblem(line, f"more than {MAX_ALIASES:,} aliases in one document")
        value, size = self.anchors[anchor]
        self._count(size, line)
        self._attach(value, line, located=False)


def _out_of_range(line: int, text: str) -> YamlProblem:
    shown = text if len(text) <= 24 else f"{text[:12]}…{text[-4:]} ({len(text):,} characters)"
    return YamlProblem(
        line,
        f"the number {shown} is out of range: a registry number is finite and at most "
        f"{MAX_NUMBER:,} in size",
    )


def _short(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


@lru_cache(maxsize=4096)
def _resolve(value: str) -> str:
    """The implicit tag of a plain scalar (YAML 1.2 core schema), cached: keys repeat."""
    return str(_SAFE.resolver.resolve(ScalarNode, value, (True, False)))


@lru_cache(maxsize=4096)
def _construct(tag: str, value: str) -> Any:
    """An int, float, bool or null from its text (immutable, so sharing is safe)."""
    return _SAFE.constructor.construct_object(ScalarNode(tag, value), deep=True)


def read_plain(text: str) -> tuple[Any, dict[NodePath, int]]:
    """The document's plain data (dicts, lists, scalars) and the line of every node path.

    Raises YamlProblem for a limit or a construct registry files do not use, and ruamel's
    MarkedYAMLError for malformed YAML. Nodes under an alias are located at the alias.
    """
    reader = _Reader()
    for event in YAML(typ="safe").parse(text):
        reader.feed(event)
    return reader.root, reader.lines
