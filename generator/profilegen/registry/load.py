"""Reads registry YAML files into plain data while remembering the line of every node."""

from __future__ import annotations

import codecs
import hashlib
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError

from ..errors import FindingSink, Location
from .files import MAX_REGISTRY_FILE, Refused, read_inside
from .safeyaml import NodePath, YamlProblem, read_plain
from .yamlerrors import syntax_error

MODELINE = re.compile(r"^#\s*yaml-language-server:\s*\$schema=(\S+)\s*$")


@dataclass
class Document:
    """One registry file: plain data plus the location of each node in it."""

    path: Path
    display: str
    data: Any
    lines: dict[NodePath, int] = field(default_factory=dict)
    modeline: str | None = None
    # The sha256 of the text it was parsed from ("" for a document made otherwise).
    digest: str = ""

    def where(self, node: NodePath = ()) -> Location:
        """The closest known line for a node path (falls back to its parents)."""
        probe = tuple(node)
        while probe:
            if probe in self.lines:
                return Location(self.display, self.lines[probe])
            probe = probe[:-1]
        return Location(self.display, self.lines.get((), 1))


# Parsed documents (data and lines, pickled: every use gets its own copy) by the sha256 of
# their text, filled from the cache by `cached.py`: a file whose bytes did not change is not
# parsed again. Only well-formed results are kept. What is unpickled here was pickled by this
# process or read from a signed cache entry (`cache/entry.py`: one this user's profilegen
# wrote), never bytes a cache folder merely holds.
PARSED: dict[str, bytes] = {}


def parse_text(
    text: str, display: str, sink: FindingSink, path: Path | None = None
) -> Document | None:
    """Parses YAML text; every syntax problem or broken limit becomes a located finding."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    try:
        hit = PARSED.get(digest)
        data, lines = pickle.loads(hit) if hit else read_plain(text)
    except YamlProblem as problem:
        sink.add(Location(display, problem.line), problem.message, hint=problem.hint)
        return None
    except MarkedYAMLError as exc:
        syntax = syntax_error(exc, text)
        sink.add(Location(display, syntax.line), syntax.message, hint=syntax.hint)
        return None
    except ReaderError as exc:
        # A character YAML cannot carry: located by its position, named by its code point.
        sink.add(*_unreadable(exc, text, display))
        return None
    except YAMLError as exc:
        sink.add(Location(display, 1), f"malformed YAML: {_first_line(exc)}")
        return None
    if hit is None:
        PARSED[digest] = pickle.dumps((data, lines), protocol=pickle.HIGHEST_PROTOCOL)
    first_line = text.split("\n", 1)[0]
    match = MODELINE.match(first_line)
    return Document(
        path=path or Path(display),
        display=display,
        data=data,
        lines=lines,
        modeline=match.group(1) if match else None,
        digest=digest,
    )


def _unreadable(exc: ReaderError, text: str, display: str) -> tuple[Location, str]:
    what = f"character #x{exc.character:02x}" if isinstance(exc.character, int) else "character"
    if not isinstance(exc.position, int):
        return Location(display, 1), f"malformed YAML: {what}: {exc.reason}"
    before = text[: exc.position]
    column = exc.position - (before.rfind("\n") + 1) + 1
    return (
        Location(display, before.count("\n") + 1),
        f"malformed YAML at column {column}: {what}: {exc.reason}",
    )


def _first_line(exc: Exception) -> str:
    return next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


def decode(raw: bytes, display: str, sink: FindingSink) -> str | None:
    """UTF-8 text (a UTF-8 byte-order mark is dropped); binary and other encodings are findings."""
    for bom, name in (
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if raw.startswith(bom):
            sink.add(Location(display, 1), f"file is {name} text", hint="save it as UTF-8")
            return None
    nul = raw.find(b"\0")
    if nul >= 0:
        line = raw[:nul].count(b"\n") + 1
        sink.add(Location(display, line), "file is binary (it holds a NUL byte), not YAML")
        return None
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        sink.add(Location(display, line), "file is not valid UTF-8")
        return None


def read_document(path: Path, root: Path, sink: FindingSink) -> Document | None:
    """Reads one registry file; problems are added to the sink, never raised."""
    display = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    try:
        raw = read_inside(root, path, MAX_REGISTRY_FILE)
    except Refused as exc:
        sink.add(Location(display), f"{path.name} {exc}", rule="layout")
        return None
    text = decode(raw, display, sink)
    return None if text is None else parse_text(text, display, sink, path)
