"""Model facts as they are derived: each value with the file, commit and key it was read from."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import EXIT_USAGE, ProfilegenError, printable
from ..registry.safeyaml import MAX_NUMBER

# The largest fact a registry file can hold: a checkpoint's past it is refused at its key.
MAX_FACT = MAX_NUMBER


class DerivationError(ProfilegenError):
    """The checkpoint does not say a fact the model needs (or says something impossible): the
    input is unusable, exit 2."""

    exit_code = EXIT_USAGE


# What a checkpoint may give as an architecture or model type: it becomes part of metadata keys
# (`<arch>.block_count`), a registry id's family and lines of output.
_KIND_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_NAME_LIMIT = 200


def kind_name(value: object, file: str, key: str) -> str:
    """An architecture or model-type name read from a checkpoint, refused unless it is one
    word of letters, digits, `_`, `.` and `-` (a newline could forge lines of output)."""
    if isinstance(value, str) and _KIND_NAME.fullmatch(value):
        return value
    shown = printable(str(value)[:80]) + ("..." if len(str(value)) > 80 else "")
    raise DerivationError(
        f"{printable(file)}: {key} '{shown}' is not an architecture name "
        "(one word of letters, digits, '_', '.' and '-', at most 64 characters)"
    )


def display_name(value: object) -> str | None:
    """A checkpoint's free-text name (`general.name`), or None when it is empty, over-long or
    holds characters a terminal or a reader cannot see for what they are."""
    if not isinstance(value, str) or not value.strip() or len(value) > _NAME_LIMIT:
        return None
    text = value.strip()
    return text if printable(text) == text else None


@dataclass(frozen=True)
class Source:
    """One file of a checkpoint at a commit, under a short label (`config`, `gguf`)."""

    label: str
    repo: str
    revision: str
    file: str

    def entry(self) -> dict[str, str]:
        return {"repo": self.repo, "revision": self.revision, "file": self.file}


@dataclass
class Facts:
    """Values by dotted path (`architecture.num_layers`) and where each came from."""

    values: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def put(self, path: str, value: Any, source: Source, key: str | None) -> None:
        self.values[path] = value
        self.sources[source.label] = source
        self.provenance[path] = {"source": source.label, **({"key": key} if key else {})}

    def attribute(
        self, path: str, source: Source, key: str | None, estimate: str | None = None
    ) -> None:
        """Where a fact the draft keeps outside `values` came from (an artifact's size), and
        how it was worked out when it is an estimate rather than a value read."""
        self.sources[source.label] = source
        origin: dict[str, Any] = {"source": source.label}
        origin.update({"key": key} if key else {})
        origin.update({"estimate": estimate} if estimate else {})
        self.provenance[path] = origin

    def merge(self, other: Facts) -> None:
        """Adds facts the other source knows and this one does not (this one wins)."""
        for path, value in other.values.items():
            if path not in self.values:
                self.values[path] = value
                self.provenance[path] = other.provenance[path]
                label = other.provenance[path]["source"]
                self.sources[label] = other.sources[label]
        self.notes += other.notes

    def tree(self, prefix: str) -> dict[str, Any]:
        """The values under `prefix.` as nested dicts (`linear_attention.conv_kernel`)."""
        out: dict[str, Any] = {}
        for path, value in self.values.items():
            if not path.startswith(f"{prefix}."):
                continue
            node = out
            parts = path[len(prefix) + 1 :].split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
        return out


class Lookup:
    """Reads keys of one JSON object (or GGUF metadata), remembering which key answered."""

    def __init__(self, data: dict[str, Any], source: Source, prefix: str = "") -> None:
        self.data, self.source, self.prefix = data, source, prefix

    def first(self, names: Iterable[str]) -> tuple[str, Any] | None:
        for name in names:
            value = self.data.get(name)
            if value is not None:
                return f"{self.prefix}{name}", value
        return None

    def put(
        self, facts: Facts, path: str, names: Sequence[str], kind: type = int, least: int = 1
    ) -> Any:
        """Sets the fact from the first key present; returns the value (None if absent).

        An integer below `least` is an error; with `least=0`, 0 means "none" and sets nothing.
        """
        found = self.first(names)
        if found is None:
            return None
        key, value = found
        value = self.typed(key, value, kind, least)
        if kind is int and value == 0 and least == 0:
            return None
        facts.put(path, value, self.source, key)
        return value

    def need(self, facts: Facts, path: str, names: Sequence[str], kind: type = int) -> Any:
        value = self.put(facts, path, names, kind)
        if value is None:
            alternatives = f" (nor {', '.join(names[1:])})" if len(names) > 1 else ""
            raise DerivationError(
                f"{self.source.file} has no {self.prefix}{names[0]}{alternatives}: "
                f"cannot tell {path.rpartition('.')[2].replace('_', ' ')}"
            )
        return value

    def typed(self, key: str, value: Any, kind: type, least: int = 1) -> Any:
        """A value of the expected kind; a whole float (4096.0) counts as an integer."""
        if kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise DerivationError(
                f"{self.source.file}: {key} is {value!r}, expected {'an integer' if kind is int else kind.__name__}"
            )
        if isinstance(value, int) and value < least:
            raise DerivationError(
                f"{self.source.file}: {key} is {value}, expected at least {least}"
            )
        if isinstance(value, (int, float)) and (abs(value) > MAX_FACT or not math.isfinite(value)):
            raise DerivationError(  # named here, not at the registry file it would reach
                f"{self.source.file}: {key} is {value!r}, past any checkpoint's (a fact is "
                f"finite and at most {MAX_FACT:,})"
            )
        return value


def every_nth(layers: int, n: int) -> int:
    """Layers i (0-based) with (i + 1) % n == 0: every n-th layer, the last of each group
    (counted, not looped over: a header's layer count is not to be trusted)."""
    return layers // n


def every_from(layers: int, n: int, offset: int) -> int:
    """Layers i (0-based) with i % n == offset."""
    return 0 if offset >= min(n, layers) else (layers - offset + n - 1) // n
