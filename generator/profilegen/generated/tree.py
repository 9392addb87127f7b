"""The whole checked-in generated tree: compose/<id>/ for every profile and the docs/ pages."""

from __future__ import annotations

from pathlib import Path

from ..docs.catalog import docs_plan
from ..errors import Finding
from ..registry import Registry
from ..render import Rendered, render_profile_cached
from ..render.estate import plan_estate
from ..render.targets.gateway import render_gateway

COMPOSE_DIR = "compose"
GATEWAYS_DIR = "gateways"
GENERATED_NAMES = frozenset({"compose.yaml", "patches.manifest.json", ".env.example"})
GATEWAY_NAMES = frozenset({"compose.yaml", "config.yaml", ".env.example"})


def render_all(registry: Registry, only: frozenset[str] | None = None) -> dict[str, Rendered]:
    """Every concrete profile (or those in `only`) rendered, by id."""
    return {
        p.id: render_profile_cached(registry, p)
        for p in registry.concrete_profiles()
        if only is None or p.id in only
    }


def plan_all(registry: Registry, rendered: dict[str, Rendered] | None = None) -> dict[str, bytes]:
    """Relative path -> bytes of every generated file (compose/ and docs/)."""
    plan: dict[str, bytes] = {}
    for profile_id, result in (rendered or render_all(registry)).items():
        for name, content in result.files().items():
            plan[f"{COMPOSE_DIR}/{profile_id}/{name}"] = content
    plan.update(docs_plan(registry))
    plan.update(plan_gateways(registry)[0])
    return plan


def plan_gateways(registry: Registry) -> tuple[dict[str, bytes], list[Finding]]:
    """gateways/<id>/ of every registry gateway that has no error, and the errors of the rest
    (`check` reports those through its gateway rules)."""
    plan: dict[str, bytes] = {}
    errors: list[Finding] = []
    for ident in sorted(registry.gateways):
        estate = plan_estate(registry, registry.gateways[ident], registered=True)
        if estate.errors:
            errors.extend(estate.errors)
            continue
        for name, content in render_gateway(registry, estate).files().items():
            plan[f"{GATEWAYS_DIR}/{ident}/{name}"] = content
    return plan, errors


def orphan_dirs(root: Path, keep: set[str], top: str = COMPOSE_DIR) -> list[Path]:
    folder = root / top
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in keep)


def remove_orphans(root: Path, keep: set[str], top: str = COMPOSE_DIR) -> list[Path]:
    """Deletes generated files of profiles (or gateways) that no longer exist (nothing else)."""
    names = GATEWAY_NAMES if top == GATEWAYS_DIR else GENERATED_NAMES
    removed = []
    for folder in orphan_dirs(root, keep, top):
        for name in names:
            path = folder / name
            if path.is_file():
                path.unlink()
                removed.append(path)
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed
