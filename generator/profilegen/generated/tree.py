"""The whole checked-in generated tree: compose/<id>/ for every profile and the docs/ pages."""

from __future__ import annotations

from pathlib import Path

from ..docs.catalog import docs_plan
from ..registry import Registry
from ..render import Rendered, render_profile_cached

COMPOSE_DIR = "compose"
GENERATED_NAMES = frozenset({"compose.yaml", "patches.manifest.json", ".env.example"})


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
    return plan


def orphan_dirs(root: Path, keep: set[str]) -> list[Path]:
    folder = root / COMPOSE_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in keep)


def remove_orphans(root: Path, keep: set[str]) -> list[Path]:
    """Deletes generated files of profiles that no longer exist (nothing else)."""
    removed = []
    for folder in orphan_dirs(root, keep):
        for name in GENERATED_NAMES:
            path = folder / name
            if path.is_file():
                path.unlink()
                removed.append(path)
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed
