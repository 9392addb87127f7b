"""The drafter a profile uses: its entity (from the upstream drafter file) and the profile's use."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ...families import family as engine_family
from .flags import Facts
from .models import SPEC_METHODS
from .script import ScriptFacts
from .words import binding, default_value

MAX_WIDTH_FLOOR = 8
_COMPOUND = re.compile(r"^(?P<type>[a-z0-9_-]+):n_max=(?P<n>[^,]+)(?:,p_min=(?P<p>.+))?$")


def drafter_entity(
    ident: str,
    up: dict[str, Any] | None,
    method: str,
    artifact: dict[str, Any] | None,
    widths: list[int],
) -> dict[str, Any]:
    up = up or {}
    n_default = int(up.get("n_default") or (widths[0] if widths else 1))
    n_max = max([int(up.get("n_max") or n_default), n_default, *widths])
    data: dict[str, Any] = {
        "id": ident,
        "name": str(up.get("display_name") or ident),
        "method": method,
    }
    if artifact is None:
        data["builtin"] = True
    else:
        data["artifact"] = artifact
    compat = up.get("model_compat")
    if isinstance(compat, list) and compat:
        data["models"] = [str(m) for m in compat]
    data["default_width"] = max(n_default, 1)
    # The catalogue does not enforce its n_max; profilegen's guard only stops typos.
    data["max_width"] = max(n_max, MAX_WIDTH_FLOOR)
    return data


def spec_use(
    facts: Facts, script: ScriptFacts, family: str
) -> tuple[int | None, dict[str, Any], str | None]:
    """(width, extra DrafterUse fields, llama --spec-type) the compose configures."""
    extra: dict[str, Any] = {}
    if engine_family(family).spec_style == "json":
        return script.spec_default, extra, None
    types = [str(t) for t in facts.values.get("spec_types", [])]
    # Several drafting stages: the one whose width follows SPEC_N is the drafter, the others
    # are passed along with it.
    main = next((t for t in types if "SPEC_N" in t), types[0] if types else None)
    rest = [t for t in types if t is not main]
    if rest:
        extra["extra_args"] = [w for t in rest for w in ("--spec-type", default_value(t))]
    spec_type = default_value(main) if main else None
    width = facts.values.get("spec_width")
    raw_type = spec_type or ""
    compound = _COMPOUND.match(str(main or ""))
    if compound and "SPEC_N" in compound["n"]:  # ik_llama: the width inside the value
        b = binding(compound["n"])
        width = int(b.default) if b else int(compound["n"])
        if compound["p"]:
            pb = binding(compound["p"])
            extra["min_probability"] = float(pb.default if pb else compound["p"])
        raw_type = compound["type"]
    elif spec_type is not None and width is None:
        extra["pass_width"] = False
        return None, extra, raw_type
    if width is None and spec_type is not None:
        extra["pass_width"] = False
    return (int(width) if width is not None else None), extra, raw_type or None


def method_of(
    up: dict[str, Any] | None, spec_json: dict[str, Any] | None, spec_type: str | None
) -> str:
    if spec_json is not None:
        method = spec_json.get("method")
        return SPEC_METHODS.get(str(method), str(method)) if method else "draft_model"
    if up and up.get("spec_method"):
        return SPEC_METHODS.get(str(up["spec_method"]), "mtp")
    if spec_type:
        return {"draft-mtp": "mtp", "mtp": "mtp", "dflash": "dflash", "draft-dflash": "dflash",
                "draft-dspark": "dspark", "draft-eagle3": "eagle3"}.get(spec_type, "mtp")  # fmt: skip
    return "mtp"


def draft_artifact(
    up: dict[str, Any] | None, spec_json: dict[str, Any] | None, draft_path: str | None, mount: str
) -> dict[str, Any] | None:
    """The drafter's own files, where the compose loads them from (None: built into the model)."""
    download = (up or {}).get("download")
    path = None
    if spec_json and isinstance(spec_json.get("model"), str):
        path = str(spec_json["model"])
    elif draft_path:
        path = draft_path
    if path is None:
        return None
    rel = path.removeprefix(mount.rstrip("/") + "/")
    files = [posixpath.basename(rel)] if rel.endswith(".gguf") else []
    out: dict[str, Any] = {"repo": download.get("hf_repo") if isinstance(download, dict) else None}
    if files:
        out["files"] = files
    size = download.get("size_gb") if isinstance(download, dict) else None
    if isinstance(size, int | float):
        out["size"] = {"value": size, "unit": "GB"}
    out["format"] = "gguf" if files else "safetensors"
    out["kind"] = "draft"
    out["local_dir"] = posixpath.dirname(rel) if files else rel
    return out
