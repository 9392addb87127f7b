"""The loaded registry: entities by id, and where each value came from (file and line)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..errors import Location
from ..model import Drafter, Engine, Gateway, Gpu, Model, Patch, Profile, Rig
from ..model.facts import EngineFacts
from ..model.settings import Settings
from .load import Document
from .safeyaml import NodePath

T = TypeVar("T")


@dataclass
class Source:
    """Where an entity came from: a locator for any node path in it."""

    file: str
    # The profile these lines were resolved for: a value that comes from another file
    # (a base it extends) is located there and names this profile as its inheritor.
    owner: str | None = None
    # Node path -> location; built from `numbers` (this file's line numbers) when first
    # asked, since most entities are never located.
    located: dict[NodePath, Location] | None = None
    numbers: dict[NodePath, int] = field(default_factory=dict)

    @property
    def lines(self) -> dict[NodePath, Location]:
        if self.located is None:
            self.located = {p: Location(self.file, n) for p, n in self.numbers.items()}
        return self.located

    def where(self, node: NodePath = ()) -> Location:
        probe = tuple(node)
        if self.located is None:  # this file's own lines: one location made, not all
            while probe and probe not in self.numbers:
                probe = probe[:-1]
            return self._own(Location(self.file, self.numbers.get(probe, 1)))
        while probe:
            if probe in self.lines:
                return self._own(self.lines[probe])
            probe = probe[:-1]
        return self._own(self.lines.get((), Location(self.file, 1)))

    def _own(self, location: Location) -> Location:
        if self.owner is None or location.file == self.file:
            return location
        return location.via(self.owner)

    @classmethod
    def of(cls, doc: Document) -> Source:
        return cls(doc.display, numbers=doc.lines)


@dataclass
class Registry:
    root: Path
    gpus: dict[str, Gpu] = field(default_factory=dict)
    rigs: dict[str, Rig] = field(default_factory=dict)
    engines: dict[str, Engine] = field(default_factory=dict)
    models: dict[str, Model] = field(default_factory=dict)
    drafters: dict[str, Drafter] = field(default_factory=dict)
    patches: dict[str, Patch] = field(default_factory=dict)
    # Concrete (renderable) profiles, resolved; abstract bases are only named.
    profiles: dict[str, Profile] = field(default_factory=dict)
    abstract_profiles: set[str] = field(default_factory=set)
    gateways: dict[str, Gateway] = field(default_factory=dict)
    sources: dict[tuple[str, str], Source] = field(default_factory=dict)
    # Entities whose file failed validation: their own findings say why, so
    # references to them are not reported again as "not defined".
    broken: set[tuple[str, str]] = field(default_factory=set)
    documents: list[tuple[str, Document]] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)
    # Each engine's facts file (registry/engines/facts/), read from its real release.
    facts: dict[str, EngineFacts] = field(default_factory=dict)
    # The sha256 of each facts file's text (what the cache names a set of facts by).
    facts_digests: dict[str, str] = field(default_factory=dict)
    # Values derived from the whole loaded registry (which nothing changes after loading),
    # each worked out once, when first asked: see `derived`.
    # Not an __init__ field: a copy (`dataclasses.replace`) starts with nothing derived, as its
    # contents may differ.
    _derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, init=False)

    def __repr__(self) -> str:
        """A line, not the whole registry (which reaches tracebacks and test reports)."""
        counts = ", ".join(
            f"{len(getattr(self, kind))} {kind}"
            for kind in ("profiles", "models", "engines", "rigs", "patches")
        )
        return f"Registry({str(self.root)!r}: {counts})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's (and Hypothesis's) pretty printer shows the same line."""
        printer.text(repr(self))

    def where(self, kind: str, ident: str, node: NodePath = ()) -> Location:
        source = self.sources.get((kind, ident))
        return source.where(node) if source else Location(f"registry/{kind}/{ident}.yaml", 1)

    def concrete_profiles(self) -> Iterator[Profile]:
        """Profiles that render, sorted by id."""
        for ident in sorted(self.profiles):
            yield self.profiles[ident]

    def derived(self, name: str, make: Callable[[Registry], T]) -> T:
        """`make(self)`, worked out on the first call for `name` and kept with the registry."""
        if name not in self._derived:
            self._derived[name] = make(self)
        return self._derived[name]  # type: ignore[no-any-return]

    def table(self, kind: str) -> dict[str, Any]:
        return getattr(self, kind)  # type: ignore[no-any-return]
