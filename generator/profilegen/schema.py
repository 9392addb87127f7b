"""JSON Schema for each registry file kind, generated from the models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .registry import KINDS, file_model

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _schema_for(model: type[BaseModel], name: str, title: str) -> dict[str, Any]:
    schema = model.model_json_schema(mode="validation")
    schema["title"] = title
    return {"$schema": SCHEMA_DIALECT, "$id": f"{name}.schema.json", **schema}


def extra_schemas() -> dict[str, tuple[type[BaseModel], str]]:
    """Schemas for generated files (registered by the modules that write them)."""
    from .manifest import Manifest

    return {"manifest": (Manifest, "profilegen patch-delivery manifest")}


def build_schemas() -> dict[str, bytes]:
    """File name -> bytes of every schema; deterministic."""
    out: dict[str, bytes] = {}
    for kind, (_model, name) in KINDS.items():
        title = f"profilegen registry file: {kind[:-1]}"
        out[f"{name}.schema.json"] = _dump(_schema_for(file_model(kind), name, title))
    for name, (model, title) in extra_schemas().items():
        out[f"{name}.schema.json"] = _dump(_schema_for(model, name, title))
    return out


def _dump(schema: dict[str, Any]) -> bytes:
    return (json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def stale_schemas(folder: Path) -> list[str]:
    """Names of schema files that are missing or differ from a fresh build."""
    stale = []
    for name, content in build_schemas().items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != content:
            stale.append(name)
    return stale
