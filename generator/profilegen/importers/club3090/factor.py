"""Shared facts moved into `extends` bases, one per model x weights x engine."""

from __future__ import annotations

import copy
from typing import Any

# Keys that describe one profile and are never moved into a base.
OWN = frozenset({"id", "extends", "abstract", "upstream_key", "upstream_rev", "title", "status",
                 "port", "alternatives", "rig", "siblings", "evidence", "deviations", "caveats",
                 "notes", "best_for", "best_for_source", "exposures", "exposures_source",
                 "recommendations"})  # fmt: skip
NESTED = frozenset({"envelope", "serve", "runtime", "env", "mounts", "tunables", "switches"})


def factor(profiles: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Profiles (ids kept) plus abstract bases holding what each group shares."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for pid, data in sorted(profiles.items()):
        groups.setdefault((data["model"], data["weights"], data["engine"]), []).append(pid)
    out = copy.deepcopy(profiles)
    for (model, weights, engine), members in sorted(groups.items()):
        if len(members) < 2:
            continue
        base_id = f"{model}-{weights}-{engine}-base".replace("_", "-")
        base = _common([profiles[m] for m in members])
        out[base_id] = {"id": base_id, "abstract": True, **base}
        for member in members:
            out[member] = _without(out[member], base, base_id)
    return out


def _common(datas: list[dict[str, Any]]) -> dict[str, Any]:
    first, rest = datas[0], datas[1:]
    common: dict[str, Any] = {}
    for key, value in first.items():
        if key in OWN or not all(key in d for d in rest):
            continue
        if key in NESTED and isinstance(value, dict):
            shared = {
                k: v for k, v in value.items() if all(d[key].get(k, _MISSING) == v for d in rest)
            }
            if shared:
                common[key] = shared
        elif all(d[key] == value for d in rest):
            common[key] = value
    return common


def _without(data: dict[str, Any], base: dict[str, Any], base_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "upstream_key":
            out["extends"] = base_id
        if key in base and key in NESTED and isinstance(value, dict):
            rest = {k: v for k, v in value.items() if base[key].get(k, _MISSING) != v}
            if rest:
                out[key] = rest
        elif key not in base or base[key] != value:
            out[key] = value
    out.setdefault("extends", base_id)
    return out


class _Missing:
    pass


_MISSING = _Missing()
