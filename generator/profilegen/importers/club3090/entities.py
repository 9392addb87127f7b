"""The entities profiles refer to (engines, models, drafters, patches), gathered once."""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import UsageError
from ...families import family as engine_family
from .catalog import Entry
from .compose import ComposeFile
from .drafters import draft_artifact, drafter_entity, method_of, spec_use
from .engines import BUILDS, EngineBuild, new_build
from .models import (
    architecture,
    artifact,
    unreadable,
    upstream_drafters,
    upstream_engines,
    upstream_models,
    weight_dtype,
)
from .patches import Mount, patch_entity, patch_mounts, python_path_mounts
from .source import Tree

MOUNTS = ("/root/.cache/huggingface", "/models")
NGRAM = "ngram-lookup"


@dataclass
class Note:
    key: str
    kind: str  # escape (kept verbatim), drift (registry vs compose), note
    message: str


@dataclass
class Catalogue:
    """Everything one import produces: entities by kind, and what it reports."""

    rev: str | None  # the commit (8 hex digits); None for a plain folder
    engines: dict[str, EngineBuild] = field(default_factory=dict)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    drafters: dict[str, dict[str, Any]] = field(default_factory=dict)
    patches: dict[str, dict[str, Any]] = field(default_factory=dict)
    rigs: set[str] = field(default_factory=set)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)

    def note(self, key: str, kind: str, message: str) -> None:
        self.notes.append(Note(key, kind, message))


class Entities:
    """Adds to a Catalogue each entity a profile names, the first time it is named."""

    def __init__(
        self, tree: Tree, out: Catalogue, pinned: dict[str, list[tuple[str, str]]] | None
    ) -> None:
        self.tree = tree
        self.out = out
        # Patch id -> (file, sha256) already in the registry: other bytes get another id.
        self.pinned = pinned or {}
        self.up_models = upstream_models(tree)
        self.up_drafters = upstream_drafters(tree)
        self.up_engines = upstream_engines(tree)

    def engine(self, build_dir: str, compose: ComposeFile) -> EngineBuild:
        mount = next(((v.target, v.read_only) for v in compose.volumes if v.target in MOUNTS), None)
        mount = mount or (engine_family(BUILDS[build_dir][0]).model_mount, False)
        build = new_build(build_dir, compose.image, compose.image_var, mount)
        return self.out.engines.setdefault(build.id, build)

    def engine_usage(self, engine: EngineBuild, data: dict[str, Any], facts: Any) -> None:
        engine.used_flags |= {w for w in data["serve"].get("extra_args", []) if w.startswith("-")}
        drafter = data.get("drafter") or {}
        engine.used_flags |= {w for w in drafter.get("extra_args", []) if w.startswith("-")}
        for key in ("kv_cache_dtype", "kv_cache_dtype_v"):
            if key in data["envelope"]:
                engine.kv_dtypes.add(str(data["envelope"][key]))
        engine.used_flags |= facts.flags
        engine.bare_switches |= facts.bare
        for fact, flag in facts.spellings.items():
            engine.spellings.setdefault(fact, {})
            engine.spellings[fact][flag] = engine.spellings[fact].get(flag, 0) + 1
            engine.used_flags.add(flag)

    def model(self, model_id: str) -> dict[str, Any]:
        if model_id not in self.out.models:
            up = self.up_models.get(model_id)
            if up is None:
                raise UsageError(
                    unreadable(self.tree, "models", model_id)
                    or f"model {model_id} has no scripts/lib/profiles/models file upstream"
                )
            self.out.models[model_id] = {
                "id": model_id,
                "name": str(up.get("display_name") or model_id),
                "family": str(up.get("family") or model_id).lower(),
                "served_name": model_id,
                "architecture": architecture(up),
                "artifacts": {},
            }
        return self.out.models[model_id]

    def weights(
        self, entry: Entry, model_id: str, path: Any, engine: EngineBuild, notes: list[str]
    ) -> str:
        variant = str(entry.get("weights_variant"))
        model = self.model(model_id)
        up = (self.up_models[model_id].get("weights") or {}).get(variant, {})
        rel = _relative(str(path or ""), engine)
        files = [posixpath.basename(rel)] if rel.endswith(".gguf") else []
        local = posixpath.dirname(rel) if files else rel
        if (
            up
            and files
            and up.get("files")
            and files[0] not in [posixpath.basename(f) for f in up["files"]]
        ):
            files = [str(f) for f in up["files"]]
        art = artifact(up, local or str(up.get("local_subdir") or variant), files, "main")
        dtype = weight_dtype(variant, art["format"])
        if dtype:
            art["weight_dtype"] = dtype
        if not art.get("repo"):
            notes.append(f"weights {variant}: upstream names no Hugging Face repo")
        model["artifacts"].setdefault(_artifact_id(variant), art)
        return _artifact_id(variant)

    def file_artifact(
        self, model_id: str, path: str, engine: EngineBuild, kind: str, notes: list[str]
    ) -> str:
        rel = _relative(path, engine)
        model = self.model(model_id)
        for variant, up in (self.up_models[model_id].get("weights") or {}).items():
            for f in up.get("files") or []:
                if posixpath.join(str(up.get("local_subdir")), f) == rel or f == posixpath.basename(
                    rel
                ):
                    art = artifact(up, posixpath.dirname(rel), [posixpath.basename(rel)], kind)
                    model["artifacts"].setdefault(_artifact_id(variant), art)
                    return _artifact_id(variant)
        notes.append(f"{kind} {rel}: no upstream weights entry lists it")
        ident = _artifact_id(posixpath.basename(rel).rsplit(".", 1)[0])
        model["artifacts"].setdefault(ident, {"repo": None, "format": "gguf", "kind": kind,
                                              "files": [posixpath.basename(rel)], "local_dir": posixpath.dirname(rel)})  # fmt: skip
        return ident

    def patches(
        self, compose: ComposeFile, script: Any, engine: str, notes: list[str]
    ) -> list[str]:
        found = {m.target.rstrip("/"): m for m in patch_mounts(self.tree, compose)}
        on_path = python_path_mounts(compose.env.get("PYTHONPATH"))
        fatal = "set -e" in (compose.script or "")
        ids = []
        for directory, strict in script.installs:
            mount = found.pop(f"/etc/club3090/{directory}", None)
            if mount is None and (strict or fatal):
                raise UsageError(_unmounted_installer(self.tree, compose, directory))
            if mount is None:
                notes.append(f"installer {directory}/install.sh has no mounted folder")
                continue
            if not mount.is_file and not self.tree.is_file(f"{mount.repo_path}/install.sh"):
                raise UsageError(_installer_missing(self.tree, compose, directory, mount))
            ids.append(
                self._patch(mount, engine, (directory, strict or fatal), "w4a8" in directory)
            )
        for mount in found.values():
            ids.append(self._patch(mount, engine, None, False, mount.target.rstrip("/") in on_path))
        return ids

    def _patch_id(self, mount: Mount, engine: str) -> str:
        base = mount.name
        existing = self.out.patches.get(base)
        if existing is None or existing["engine"] == engine:
            return base
        return f"{base}-{engine.replace('.', '')}"

    def _patch(
        self, mount: Mount, engine: str, install: Any, w4a8: bool, python_path: bool = False
    ) -> str:
        ident = self._patch_id(mount, engine)
        if ident in self.out.patches:
            return ident
        data = patch_entity(self.tree, mount, ident, engine, install, w4a8, python_path)
        files = sorted((f["path"], f["sha256"]) for f in data["source"]["files"])
        if ident in self.pinned and self.pinned[ident] != files:
            # Upstream changed it: a new patch, reviewable, named by revision or by content.
            ident = f"{ident}-{self.out.rev or _digest(files)}"
            data["id"] = ident
        self.out.patches[ident] = data
        return ident

    def drafter(
        self,
        entry: Entry,
        facts: Any,
        script: Any,
        compose: ComposeFile,
        engine: EngineBuild,
        notes: list[str],
    ) -> dict[str, Any] | None:
        family = engine.family
        width, use, spec_type = spec_use(facts, script, family)
        spec_json = script.spec_json or facts.values.get("spec_json")
        ident = entry.get("drafter")
        if ident is None and spec_type is not None and script.spec_gate:
            # Drafting the registry does not name (llama.cpp's n-gram lookup): a built-in
            # drafter whose words travel as they are, switched like any other.
            self.out.drafters.setdefault(NGRAM, drafter_entity(NGRAM, None, "ngram", None, []))
            words = ["--spec-type", spec_type, *use.get("extra_args", [])]
            return {"id": NGRAM, "width": 1, "pass_width": False, "extra_args": words}
        if ident is None or (width is None and spec_type is None and spec_json is None):
            if spec_type is not None:
                notes.append("not modelled, kept as extra arguments (drafting without a drafter): "
                             f"--spec-type {spec_type}")  # fmt: skip
                facts.extra += ["--spec-type", spec_type, *use.get("extra_args", [])]
            return None
        ident = str(ident)
        up = self.up_drafters.get(ident)
        if up is None and (why := unreadable(self.tree, "drafters", ident)):
            raise UsageError(why)  # never a drafter guessed in place of one upstream states
        if engine_family(family).spec_style == "types" and spec_type:
            method = method_of(up, None, spec_type)
            engine.spec_types.setdefault(method, spec_type)
        else:
            method = method_of(up, spec_json if isinstance(spec_json, dict) else None, None)
        draft = draft_artifact(up, spec_json if isinstance(spec_json, dict) else None,
                               facts.values.get("draft_path"), engine.data["model_mount"])  # fmt: skip
        widths = [width] if width else []
        known = self.out.drafters.get(ident)
        if known is not None and known.get("artifact") != draft and draft is not None:
            # Another file of the same drafter (a different quantization): its own entry.
            ident = (
                f"{ident}-{_artifact_id(posixpath.basename(draft['files'][0]).rsplit('.', 1)[0])}"
                if draft.get("files")
                else f"{ident}-{_artifact_id(draft['local_dir'])}"
            )
            known = self.out.drafters.get(ident)
        if known is not None:
            known["max_width"] = max(known["max_width"], *widths) if widths else known["max_width"]
        else:
            self.out.drafters[ident] = drafter_entity(ident, up, method, draft, widths)
        if method == "mtp" and draft is None:
            # A built-in MTP drafter means the checkpoint carries the head.
            self.model(str(entry.get("model")))["architecture"].setdefault("mtp_layers", 1)
        out: dict[str, Any] = {"id": ident, "width": width if width is not None else 1, **use}
        if script.draft_file_check:
            out["require_file"] = True
        return out


def _relative(path: str, engine: EngineBuild) -> str:
    mount = str(engine.data["model_mount"]).rstrip("/") + "/"
    return path.removeprefix(mount)


def _artifact_id(variant: str) -> str:
    return re.sub(r"[^a-z0-9._-]", "-", variant.lower()).strip("-._") or "weights"


def _digest(files: list[tuple[str, str]]) -> str:
    return hashlib.sha256(repr(files).encode()).hexdigest()[:8]


def _installer_missing(tree: Tree, compose: ComposeFile, directory: str, mount: Mount) -> str:
    """A boot that runs a patch's installer from a mounted folder that holds none (or holds
    something that is no file: a FIFO, a device): upstream's boot fails there."""
    script = f"/etc/club3090/{directory}/install.sh"
    text = tree.text(compose.path) or ""
    line = next((n for n, x in enumerate(text.splitlines(), 1) if script in x), None)
    where = f"{compose.path}:{line}" if line else compose.path
    at = tree.commit[:8] if tree.commit else "the work tree"
    return (
        f"{where}: the boot runs {script}, but the patch folder {mount.repo_path} it mounts "
        f"holds no install.sh file at {at}"
    )


def _unmounted_installer(tree: Tree, compose: ComposeFile, directory: str) -> str:
    """A boot that must run a patch's installer (`|| exit 1`, `set -e`), whose folder the
    compose does not mount: upstream's server refuses to start, and so does the import."""
    script = f"/etc/club3090/{directory}/install.sh"
    text = tree.text(compose.path) or ""
    line = next((n for n, x in enumerate(text.splitlines(), 1) if script in x), None)
    where = f"{compose.path}:{line}" if line else compose.path
    return (
        f"{where}: the boot runs {script} and stops if it fails, but the compose mounts no "
        f"patch folder at /etc/club3090/{directory}"
    )
