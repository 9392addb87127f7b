"""The upstream catalogue's own registry: entries by key, read as data (never executed)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ...errors import UsageError
from .source import Tree

REGISTRY_YAML = "scripts/lib/profiles/registry.yaml"
REGISTRY_PY = "scripts/lib/profiles/compose_registry.py"


@dataclass(frozen=True)
class Entry:
    """One upstream catalogue entry (a key such as `vllm/qwen38-27b-dual-fast`)."""

    key: str
    fields: dict[str, Any] = field(default_factory=dict)
    # The line of the catalogue file each field is written on (where it could be found).
    lines: dict[str, int] = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        value = self.fields.get(name, default)
        return default if value is None else value

    @property
    def compose_path(self) -> str:
        return str(self.fields.get("compose_path") or self.fields.get("compose") or "")


def read_catalog(tree: Tree) -> tuple[str, list[Entry]]:
    """(where it was read from, the entries in catalogue order)."""
    text = tree.text(REGISTRY_YAML)
    if text is not None:
        return REGISTRY_YAML, _with_lines(_from_yaml(text), text)
    source = tree.text(REGISTRY_PY)
    if source is not None:
        return REGISTRY_PY, _from_python(source)
    raise UsageError(
        f"{tree.root} has neither {REGISTRY_YAML} nor {REGISTRY_PY} at {tree.rev or 'the work tree'}"
    )


def _from_yaml(text: str) -> list[Entry]:
    try:
        doc = YAML(typ="safe").load(text)
    except YAMLError as exc:
        raise UsageError(f"{REGISTRY_YAML}: not valid YAML ({_first_line(exc)})") from None
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if not isinstance(entries, dict):
        raise UsageError(f"{REGISTRY_YAML}: no `entries:` mapping")
    out = []
    for key, fields in entries.items():
        if not isinstance(fields, dict):
            raise UsageError(f"{REGISTRY_YAML}: entry {key!r} is not a mapping")
        out.append(Entry(str(key), dict(fields)))
    return out


_ENTRY_KEY = re.compile(r"^  (?P<key>\"[^\"]+\"|'[^']+'|[^\s#][^:]*):\s*(#.*)?$")
_FIELD = re.compile(r"^    (?P<name>[a-z_][a-z0-9_]*):")


def _with_lines(entries: list[Entry], text: str) -> list[Entry]:
    """The entries with the line of each field, read from the file's block layout."""
    lines: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if (m := _ENTRY_KEY.match(line)) is not None:
            current = lines.setdefault(m["key"].strip("\"'"), {})
        elif current is not None and (m := _FIELD.match(line)) is not None:
            current.setdefault(m["name"], number)
        elif line and not line.startswith((" ", "#")):
            current = None
    return [Entry(e.key, e.fields, lines.get(e.key, {})) for e in entries]


def _from_python(source: str) -> list[Entry]:
    """`"key": _entry(field=literal, ...)` items of the registry dict, read with `ast`."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise UsageError(
            f"{REGISTRY_PY}: cannot be parsed ({exc.msg}, line {exc.lineno})"
        ) from None
    out: dict[str, Entry] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "_entry":
                lines = {kw.arg: kw.value.lineno for kw in value.keywords if kw.arg}
                out[key.value] = Entry(key.value, _keywords(value), lines)
    if not out:
        raise UsageError(f'{REGISTRY_PY}: no `"key": _entry(...)` items found')
    return list(out.values())


def _keywords(call: ast.Call) -> dict[str, Any]:
    fields = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        try:
            fields[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, SyntaxError):
            fields[kw.arg] = None  # an expression, not data: left unread
    return fields


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
