"""Reads the engines' facts files (`registry/engines/facts/<engine-id>.json`), bounded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from ..errors import FindingSink, Location, Severity
from ..model.facts import EngineFacts
from .files import (
    HIDDEN,
    MAX_REGISTRY_FILE,
    Refused,
    check_entry,
    escapes,
    foreign,
    hidden,
    kept_empty,
    read_inside,
)
from .load import decode
from .memo import FACTS
from .safejson import load_json
from .source import Registry, Source

FACTS_DIR = "registry/engines/facts"


def facts_path(root: Path, engine_id: str) -> Path:
    return root / FACTS_DIR / f"{engine_id}.json"


def load_facts(root: Path, registry: Registry, sink: FindingSink) -> None:
    """Every facts file into `registry.facts`; a broken one is a located finding."""
    folder = root / FACTS_DIR
    if not folder.is_dir() or escapes(root, folder):
        return
    for entry in sorted(folder.iterdir()):
        rel = entry.relative_to(root).as_posix()
        if kept_empty(entry):
            continue
        if (escaped := foreign(rel)) is not None:
            name = escaped.rsplit("/", 1)[-1]
            sink.add(
                Location(escaped),
                f"{name} is named in bytes that are not UTF-8: it is not read",
                rule="layout",
            )
            continue
        if hidden(entry) and not escapes(root, entry):
            sink.add(
                Location(rel),
                f"{entry.name} {HIDDEN}: it is not read",
                hint=f"{FACTS_DIR}/ holds one <engine-id>.json per engine",
                rule="layout",
                severity=Severity.WARNING,
            )
            continue
        if entry.suffix != ".json" or (problem := check_entry(root, entry)):
            what = problem if entry.suffix == ".json" else "is not a facts file (*.json)"
            sink.add(Location(rel), f"{entry.name} {what}", rule="layout")
            continue
        read = _read(root, entry, rel, sink)
        if read is None:
            continue
        facts, digest = read
        if facts.engine != entry.stem:
            sink.add(
                Location(rel, 1),
                f"facts of {facts.engine!r} in a file named {entry.name!r}",
                hint=f"rename the file to {facts.engine}.json",
            )
            continue
        registry.facts[facts.engine] = facts
        registry.facts_digests[facts.engine] = digest
        registry.sources[("facts", facts.engine)] = Source(rel)


def _read(root: Path, path: Path, rel: str, sink: FindingSink) -> tuple[EngineFacts, str] | None:
    """The file's facts and the sha256 of its text."""
    try:
        raw = read_inside(root, path, MAX_REGISTRY_FILE)
    except Refused as exc:
        sink.add(Location(rel), f"{path.name} {exc}", rule="layout")
        return None
    digest = hashlib.sha256(raw).hexdigest()
    known = FACTS.get(digest)
    if known is not None:
        return known, digest
    facts = _parse(raw, path, rel, sink)
    if facts is None:
        return None
    FACTS.put(digest, facts)
    return facts, digest


def _parse(raw: bytes, path: Path, rel: str, sink: FindingSink) -> EngineFacts | None:
    text = decode(raw, rel, sink)
    if text is None:
        return None
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        sink.add(Location(rel, exc.lineno), f"malformed JSON: {exc.msg}")
        return None
    try:
        return EngineFacts.model_validate(data, strict=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "facts"
        sink.add(
            Location(rel, 1),
            f"{where}: {first['msg']}",
            hint="regenerate it: profilegen engine facts " + path.stem,
        )
        return None
