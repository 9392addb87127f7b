"""`engine facts ENGINE_ID`: an engine entry's facts from its real release, as a facts file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import UsageError, suggest
from ..model import Engine
from ..model.facts import EngineFacts
from ..registry import Registry
from ..registry.enginefacts import facts_path
from ..write import write_files
from . import llamacpp, sglang, vllm
from .releases import Artifact

# Engine kind -> the module that knows its releases and reads its facts.
FAMILIES: dict[str, ModuleType] = {"vllm": vllm, "llama.cpp": llamacpp, "sglang": sglang}


@dataclass(frozen=True)
class Release:
    """The public release behind an engine entry, as its family names it."""

    family: ModuleType
    version: str

    def fetch(self, offline: bool = False) -> Artifact:
        artifact: Artifact = self.family.fetch(self.version, offline=offline)
        return artifact


def release_of(engine: Engine, version: str | None = None) -> Release | None:
    """The release an engine's image carries (or `version` of its family), or None."""
    family = FAMILIES[engine.kind]
    found = version or family.release(engine)
    return Release(family, found) if found else None


def engine_entry(registry: Registry, engine_id: str) -> Engine:
    if engine_id not in registry.engines:
        close = suggest(engine_id, list(registry.engines))
        hint = f" (did you mean {close}?)" if close else ""
        raise UsageError(f"no engine {engine_id!r}{hint}")
    return registry.engines[engine_id]


def build_facts(
    engine: Engine,
    version: str | None = None,
    offline: bool = False,
    none: str | None = None,
    new_id: str | None = None,
) -> EngineFacts:
    """The engine's facts read from its release, or its declared reason for having none;
    `version` and `new_id` read another release of its family for a new entry."""
    ident = new_id or engine.id
    command = f"profilegen engine facts {ident}"
    if none is not None:
        return EngineFacts.model_validate({"engine": ident, "none": none})
    release = release_of(engine, version)
    if release is None:
        raise UsageError(
            f"{engine.id}: {engine.image_ref} is not a public {engine.kind} release profilegen "
            "can read; declare why with --none REASON"
        )
    artifact = release.fetch(offline)
    read: dict[str, Any] = release.family.read(artifact)
    provenance = {
        "version": release.version,
        "artifact": artifact.name,
        "sha256": artifact.sha256,
        "requirement": artifact.requirement,
        "method": release.family.METHOD,
        "command": command + (f" --version {version}" if version and not new_id else ""),
    }
    read_version = str(read.pop("version", release.version))
    if read_version != release.version:
        provenance["nearest"] = (
            f"the index has no source of {release.version}; read {read_version}, the nearest"
        )
    data = {"engine": ident, "provenance": provenance, **read}
    return EngineFacts.model_validate(data, strict=False)


def dump(facts: EngineFacts) -> bytes:
    """The facts file: sorted, one flag (or variable) a line, so that a diff reads well."""
    data = facts.model_dump(by_alias=True, exclude_defaults=True, mode="json")
    data["schema"] = facts.schema_version
    lines = ["{"]
    keys = sorted(data)
    for i, key in enumerate(keys):
        value = data[key]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(value, dict) and key in ("flags", "aliases", "json", "provenance"):
            lines.append(f"  {json.dumps(key)}: " + _block(value) + comma)
        elif isinstance(value, list) and key == "env":
            lines.append(f"  {json.dumps(key)}: " + _list(value) + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)}{comma}")
    lines.append("}")
    return ("\n".join(lines) + "\n").encode()


def _block(value: dict[str, Any]) -> str:
    if not value:
        return "{}"
    rows = [f"    {json.dumps(k)}: {json.dumps(value[k], sort_keys=True)}" for k in sorted(value)]
    return "{\n" + ",\n".join(rows) + "\n  }"


def _list(value: list[str]) -> str:
    if not value:
        return "[]"
    return "[\n" + ",\n".join(f"    {json.dumps(v)}" for v in sorted(value)) + "\n  ]"


def write_facts(root: Path, facts: EngineFacts) -> list[Path]:
    return write_files({facts_path(root, facts.engine): dump(facts)}, root=root)
