"""Loads every registry file, validates it, resolves `extends`, and checks references."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import FindingSink, Location, Severity, suggest
from ..model import Drafter, Engine, Gateway, Gpu, Model, Patch, Profile, Rig
from ..model.partial import partial
from ..model.settings import Settings
from .enginefacts import load_facts
from .files import HIDDEN, check_entry, escapes, foreign, hidden, kept_empty
from .load import Document, read_document
from .memo import ENTITIES, VALID
from .resolve import check_references, resolve_profiles
from .source import Registry, Source
from .validate import report_validation

T = TypeVar("T", bound=BaseModel)

# Folder under registry/ -> (model, schema file name). The order is the load order.
KINDS: dict[str, tuple[type[BaseModel], str]] = {
    "gpus": (Gpu, "gpu"),
    "rigs": (Rig, "rig"),
    "engines": (Engine, "engine"),
    "models": (Model, "model"),
    "drafters": (Drafter, "drafter"),
    "patches": (Patch, "patch"),
    "profiles": (Profile, "profile"),
    # Gateways route to profiles: they load last.
    "gateways": (Gateway, "gateway"),
}
ProfileFile = partial(Profile, keep_required=frozenset({"id"}))
# The one registry file outside the kind folders: registry-wide settings (optional).
SETTINGS_FILE = "settings.yaml"


def file_model(kind: str) -> type[BaseModel]:
    """The model a file of this kind is validated against as written."""
    return ProfileFile if kind == "profiles" else KINDS[kind][0]


def _stray(sink: FindingSink, rel: str, what: str, hint: str) -> None:
    sink.add(
        Location(rel),
        f"{rel.rsplit('/', 1)[-1]} {what}: it is not read",
        hint=hint,
        rule="layout",
        severity=Severity.WARNING,
    )


def _foreign_name(root: Path, entry: Path, sink: FindingSink) -> bool:
    """An entry whose name is not UTF-8: reported with its bytes escaped, never read (no
    text could name it, nor print it as it is)."""
    rel = foreign(entry.relative_to(root).as_posix())
    if rel is None:
        return False
    sink.add(
        Location(rel),
        f"{rel.rsplit('/', 1)[-1]} is named in bytes that are not UTF-8: it is not read",
        hint="rename it to an id: a-z, 0-9, '.', '_' and '-'",
        rule="layout",
    )
    return True


def _kind_files(root: Path, kind: str, sink: FindingSink) -> list[Path]:
    """The YAML files of one kind; anything else in its folder is reported, never skipped."""
    files = []
    for entry in sorted((root / "registry" / kind).iterdir()):
        if kept_empty(entry) or _foreign_name(root, entry, sink):
            continue
        rel = entry.relative_to(root).as_posix()
        dot = hidden(entry)  # a swap file, a `.x.yaml`: a stray, never a registry entry
        yaml_name = entry.suffix in (".yaml", ".yml") and not dot
        if escape := escapes(root, entry):
            sink.add(Location(rel), f"{entry.name} {escape}", rule="layout")
        elif entry.is_file() and yaml_name:
            files.append(entry)
        elif kind == "patches" and entry.name == "files" and entry.is_dir():
            continue  # registry/patches/files/<patch-id>/: vendored patch files
        elif kind == "engines" and entry.name == "facts" and entry.is_dir():
            continue  # registry/engines/facts/<engine-id>.json: read by enginefacts.py
        elif yaml_name:  # a folder, FIFO, device or dangling link under a YAML name
            sink.add(Location(rel), f"{entry.name} {check_entry(root, entry)}", rule="layout")
        else:
            problem = check_entry(root, entry)
            what = problem.split(",")[0] if problem else HIDDEN if dot else "is not a YAML file"
            _stray(sink, rel, what, f"registry/{kind}/ holds one *.yaml file per {kind[:-1]}")
    return files


def _check_modeline(doc: Document, kind: str, sink: FindingSink) -> None:
    _require_modeline(doc, f"../../schema/{KINDS[kind][1]}.schema.json", sink)


def _require_modeline(doc: Document, expected: str, sink: FindingSink) -> None:
    if doc.modeline != expected:
        found = f"found {doc.modeline!r}" if doc.modeline else "it is missing"
        sink.add(
            Location(doc.display, 1),
            f"first line must be the schema modeline ({found})",
            hint=f"# yaml-language-server: $schema={expected}",
            rule="modeline",
        )


def _top_level(root: Path, sink: FindingSink) -> list[str]:
    """The kind folders present; unknown folders, stray files and escapes are findings."""
    registry_dir = root / "registry"
    if escape := escapes(root, registry_dir):
        sink.add(Location("registry"), f"registry {escape}", rule="layout")
        return []
    kinds = []
    for entry in sorted(registry_dir.iterdir()):
        if kept_empty(entry) or _foreign_name(root, entry, sink):
            continue
        rel = entry.relative_to(root).as_posix()
        where = "registry files live in registry/<kind>/: " + ", ".join(KINDS)
        if escape := escapes(root, entry):
            sink.add(Location(rel), f"{entry.name} {escape}", rule="layout")
        elif entry.name == SETTINGS_FILE:
            continue  # read by _load_settings
        elif not entry.is_dir():
            problem = check_entry(root, entry)
            what = problem.split(",")[0] if problem else HIDDEN if hidden(entry) else "is a file"
            _stray(sink, rel, what, where)
        elif hidden(entry):
            _stray(sink, rel, "is a hidden folder", where)
        elif entry.name not in KINDS:
            hint = suggest(entry.name, list(KINDS))
            sink.add(
                Location(rel),
                f"unknown registry folder {entry.name!r}",
                hint=f"did you mean {hint!r}?" if hint else "folders: " + ", ".join(KINDS),
            )
        else:
            kinds.append(entry.name)
    return kinds


def load_documents(
    root: Path, sink: FindingSink, unreadable: set[tuple[str, str]] | None = None
) -> list[tuple[str, Document]]:
    """Reads every registry file; unknown folders and stray files are findings. A file that
    cannot be read is noted in `unreadable` as (kind, file stem): its own finding says why."""
    docs: list[tuple[str, Document]] = []
    present = _top_level(root, sink)
    for kind in KINDS:
        if kind not in present:
            continue
        for path in _kind_files(root, kind, sink):
            doc = read_document(path, root, sink)
            if doc is not None:
                docs.append((kind, doc))
            elif unreadable is not None:
                unreadable.add((kind, path.stem))
    return docs


def _validate_file(kind: str, doc: Document, sink: FindingSink) -> dict[str, Any] | None:
    """Validates a file as written; returns its data when it is usable."""
    _check_modeline(doc, kind, sink)
    if not isinstance(doc.data, dict):
        sink.add(doc.where(), "a registry file must be a mapping of keys to values")
        return None
    model = file_model(kind)
    if not (doc.digest and VALID.get((kind, doc.digest))):
        try:
            model.model_validate(doc.data)
        except ValidationError as exc:
            report_validation(exc, model, doc.data, lambda p: doc.where(p), sink)
            return None
        if doc.digest:
            VALID.put((kind, doc.digest), True)
    ident = doc.data["id"]
    if doc.path.stem != ident:
        sink.add(
            doc.where(("id",)),
            f"id {ident!r} does not match the file name {doc.path.name!r}",
            hint=f"rename the file to {ident}.yaml",
        )
    return doc.data


def _entity(kind: str, doc: Document, data: dict[str, Any]) -> Any:
    """The entity of a valid file, the same object for the same text."""
    key = (kind, doc.digest)
    entity = ENTITIES.get(key) if doc.digest else None
    if entity is None:
        entity = KINDS[kind][0].model_validate(data)
        if doc.digest:
            ENTITIES.put(key, entity)
    return entity


def _load_settings(root: Path, sink: FindingSink, registry: Registry) -> Settings:
    """registry/settings.yaml, validated like any registry file; absent: the defaults.
    Its lines are kept as the source ("settings", "settings") for findings about a setting."""
    path = root / "registry" / SETTINGS_FILE
    if not path.exists() and not path.is_symlink():
        return Settings()
    doc = read_document(path, root, sink)
    if doc is None:
        return Settings()
    registry.sources[("settings", "settings")] = Source.of(doc)
    _require_modeline(doc, "../schema/settings.schema.json", sink)
    if not isinstance(doc.data, dict):
        sink.add(doc.where(), "registry/settings.yaml must be a mapping of keys to values")
        return Settings()
    try:
        return Settings.model_validate(doc.data)
    except ValidationError as exc:
        report_validation(exc, Settings, doc.data, lambda p: doc.where(p), sink)
        return Settings()


def load_registry(root: Path) -> tuple[Registry, FindingSink]:
    """Loads and validates the whole registry, collecting every finding."""
    sink = FindingSink()
    registry = Registry(root=root)
    raw_profiles: dict[str, tuple[dict[str, Any], Source]] = {}
    digests: dict[str, str] = {}
    registry.documents = load_documents(root, sink, registry.broken)
    for kind, doc in registry.documents:
        data = _validate_file(kind, doc, sink)
        if data is None:
            ident = doc.data.get("id") if isinstance(doc.data, dict) else None
            if isinstance(ident, str):
                registry.broken.add((kind, ident))
            continue
        ident = data["id"]
        if (kind, ident) in registry.sources:
            sink.add(
                doc.where(("id",)),
                f"{kind[:-1]} id {ident!r} is defined twice",
                hint=f"also in {registry.sources[(kind, ident)].file}",
            )
            continue
        registry.sources[(kind, ident)] = Source.of(doc)
        if kind == "profiles":
            raw_profiles[ident] = (data, Source.of(doc))
            digests[ident] = doc.digest
        else:
            registry.table(kind)[ident] = _entity(kind, doc, data)
    registry.settings = _load_settings(root, sink, registry)
    load_facts(root, registry, sink)
    resolve_profiles(registry, raw_profiles, sink, digests)
    check_references(registry, sink)
    return registry, sink


def open_registry(root: Path) -> Registry:
    """Loads the registry or raises with every error found."""
    registry, sink = load_registry(root)
    sink.raise_if_errors()
    return registry
