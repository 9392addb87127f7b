"""JSON Schema for each registry file kind, generated from the models."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..cache import enabled, read_sealed, write_sealed
from ..model.settings import Settings
from ..registry import KINDS, file_model
from ..render.manifest import Manifest
from ..resources import cache_root
from ..write import link_on

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _schema_for(model: type[BaseModel], name: str, title: str) -> dict[str, Any]:
    schema = model.model_json_schema(mode="validation")
    schema["title"] = title
    return {"$schema": SCHEMA_DIALECT, "$id": f"{name}.schema.json", **schema}


def extra_schemas() -> dict[str, tuple[type[BaseModel], str]]:
    """Schemas for generated files (registered by the modules that write them) and for
    registry/settings.yaml."""
    return {
        "manifest": (Manifest, "profilegen patch-delivery manifest"),
        "settings": (Settings, "profilegen registry settings"),
    }


def schema_names() -> list[str]:
    """The file name of every schema, without building any."""
    kinds = [f"{name}.schema.json" for _model, name in KINDS.values()]
    return sorted([*kinds, *(f"{name}.schema.json" for name in extra_schemas())])


def _fingerprint() -> str:
    """Schemas depend only on the model code and pydantic: hash exactly those."""
    import hashlib

    import pydantic

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(pydantic.VERSION.encode())
    for path in sorted(
        [*package.glob("model/*.py"), package / "render" / "manifest.py", Path(__file__)]
    ):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def build_schemas() -> dict[str, bytes]:
    """File name -> bytes of every schema; deterministic, memoized like compiled bytecode."""
    if not enabled():
        return _build_schemas()
    memo = cache_root() / "schemas" / f"{_fingerprint()}.json"
    # A signed entry (one this user's profilegen wrote), so a planted one is rebuilt instead.
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        if (held := read_sealed("schemas", memo)) is not None:
            return {k: v.encode() for k, v in json.loads(held).items()}
    built = _build_schemas()
    # A read-only cache only costs the rebuild; a full one is said.
    write_sealed("schemas", memo, json.dumps({k: v.decode() for k, v in built.items()}).encode())
    return built


def _build_schemas() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for kind, (_model, name) in KINDS.items():
        title = f"profilegen registry file: {kind[:-1]}"
        out[f"{name}.schema.json"] = _dump(_schema_for(file_model(kind), name, title))
    for name, (model, title) in extra_schemas().items():
        out[f"{name}.schema.json"] = _dump(_schema_for(model, name, title))
    return out


def _dump(schema: dict[str, Any]) -> bytes:
    return (json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def schema_drift(folder: Path) -> tuple[list[str], list[str]]:
    """(missing, stale): names of schema files not written yet, and of those that differ from
    a fresh build. One that is (or lies under) a symlink is neither: nothing is read through
    it, `check` reports the link (disk-link) and `profilegen schema` refuses it."""
    missing, stale = [], []
    for name, content in sorted(build_schemas().items()):
        path = folder / name
        if link_on(folder.parent, path) is not None:
            continue
        if not path.exists() and not path.is_symlink():
            missing.append(name)
        elif not path.is_file() or path.read_bytes() != content:
            stale.append(name)
    return missing, stale
