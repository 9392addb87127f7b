"""Names a maintainer already gave: an artifact the registry holds keeps its id on re-import."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .entities import Catalogue


def keep_artifact_ids(out: Catalogue, existing: Callable[[str], dict[str, Any] | None]) -> None:
    """Renames each imported artifact that the registry's model file already holds (the same
    repository, files and folder) to the id it has there, in the model and its profiles."""
    for model_id, model in out.models.items():
        old = existing(model_id) or {}
        known = {_identity(a): ident for ident, a in (old.get("artifacts") or {}).items()}
        renames = {}
        for ident, artifact in model["artifacts"].items():
            name = known.get(_identity(artifact))
            if name is not None and name != ident and name not in model["artifacts"]:
                renames[ident] = name
        if not renames:
            continue
        model["artifacts"] = {renames.get(k, k): v for k, v in model["artifacts"].items()}
        for profile in out.profiles.values():
            if profile["model"] != model_id:
                continue
            for field in ("weights", "mmproj"):
                if profile.get(field) in renames:
                    profile[field] = renames[profile[field]]


def _identity(artifact: Any) -> tuple[Any, ...]:
    if not isinstance(artifact, dict):
        return ()
    files = tuple(sorted(str(f) for f in artifact.get("files") or []))
    return (artifact.get("repo"), files, artifact.get("local_dir"), artifact.get("subfolder"))
