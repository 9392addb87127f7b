"""A model draft as a registry file and lock entries, proven by every check before it is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..check.driver import rules_of_kind, run_rules
from ..check.rules import CheckContext
from ..errors import Finding, Location, NetworkError, RegistryError, Severity, UsageError
from ..hub.checkpoint import open_cached, open_local, open_remote
from ..hub.deadline import Deadline
from ..hub.types import ArtifactRequest, ArtifactResult, RemoteFile
from ..lockfile.artifacts import SIZE_TOLERANCE, ArtifactUse
from ..lockfile.lock import LOCK_NAME, Lock, declared_entry, read_lock, resolved_entry
from ..model.model import Architecture, Artifact, Model, Sampling
from ..registry import open_registry
from ..registry.yamltext import dump_document
from ..write import write_files
from .model_add import AddOptions, ArtifactDraft, ModelDraft, check_repo, derive
from .scratch import registry_with

MODELINE = "yaml-language-server: $schema=../../schema/model.schema.json"
UNITS = (("GB", 10**9), ("MB", 10**6), ("KB", 10**3))


def _flow(value: Any) -> Any:
    if isinstance(value, dict):
        out = CommentedMap(value.items())
        out.fa.set_flow_style()
        return out
    if isinstance(value, list):
        seq = CommentedSeq(value)
        seq.fa.set_flow_style()
        return seq
    return value


def size_of(total: int) -> dict[str, Any]:
    """Bytes as a decimal size with two decimals: well inside the lock's 5% tolerance."""
    for unit, scale in UNITS:
        if total >= scale:
            return {"value": round(total / scale, 2), "unit": unit}
    return {"value": total, "unit": "B"}


def _ordered(tree: dict[str, Any], fields: list[str]) -> CommentedMap:
    out = CommentedMap()
    for name in fields:
        if name in tree:
            out[name] = _flow(tree[name])
    return out


def _artifact(draft: ModelDraft, a: ArtifactDraft) -> CommentedMap:
    values = a.facts.tree(f"artifacts.{a.variant}")
    c = draft.checkpoint
    data: dict[str, Any] = {"repo": c.repo, "revision": c.commit}
    if a.files:
        data["files"] = [f.path for f in a.files]
    if a.size:
        data["size"] = size_of(a.size)
    data.update(values)
    data["kind"] = a.kind if a.kind != "main" else None
    leaf = f"{draft.model_id}-gguf/{a.variant}" if a.files else c.repo.split("/")[1].lower()
    data["local_dir"] = leaf
    data["gated"] = True if c.gated else None
    return _ordered({k: v for k, v in data.items() if v is not None}, list(Artifact.model_fields))


def _fact_order(path: str) -> tuple[int, int, str]:
    """Facts in the order the file states them: model fields, then architecture fields."""
    top, _, rest = path.partition(".")
    fields = list(Model.model_fields)
    inner = list(Architecture.model_fields)
    first = rest.split(".")[0]
    return (
        fields.index(top) if top in fields else len(fields),
        inner.index(first) if top == "architecture" and first in inner else 0,
        path,
    )


def document(draft: ModelDraft) -> CommentedMap:
    """The model file: the shape of the hand-written ones, plus where each fact came from."""
    doc = CommentedMap()
    doc["id"] = draft.model_id
    doc["name"] = draft.name
    doc["family"] = draft.family
    doc["served_name"] = draft.model_id
    doc["architecture"] = _ordered(
        draft.facts.tree("architecture"), list(Architecture.model_fields)
    )
    if draft.trust_remote_code:
        doc["trust_remote_code"] = draft.trust_remote_code
    doc["artifacts"] = CommentedMap((a.variant, _artifact(draft, a)) for a in draft.artifacts)
    sampling = draft.facts.tree("sampling")
    if sampling:
        doc["sampling"] = _flow(_ordered(sampling, list(Sampling.model_fields)))
    facts, sources = dict(draft.facts.provenance), dict(draft.facts.sources)
    for a in draft.artifacts:
        facts.update(a.facts.provenance)
        sources.update(a.facts.sources)
    provenance = CommentedMap()
    provenance["sources"] = CommentedMap((k, _flow(s.entry())) for k, s in sources.items())
    ordered = sorted(facts, key=_fact_order)
    provenance["facts"] = CommentedMap((k, _flow(facts[k])) for k in ordered)
    doc["provenance"] = provenance
    files = ", ".join(s.file for s in sources.values())
    unknown = [a.variant for a in draft.artifacts if a.size is None]
    doc.yaml_set_start_comment(
        f"{MODELINE}\n"
        f"Added by `profilegen model add {draft.checkpoint.repo}` from {files} at "
        f"{draft.checkpoint.commit}.\n"
        "Facts read from the checkpoint name their source under provenance; a fact you "
        'change by hand is marked "stated" there.'
        + (
            f"\nThe size of {', '.join(unknown)} is unknown: fit cannot size a profile of it "
            "until `profilegen lock` reads it on the Hub."
            if unknown
            else ""
        )
    )
    return doc


def dump(doc: CommentedMap) -> str:
    return dump_document(doc)


def lock_entries(draft: ModelDraft, model: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Resolved entries when the files came from the Hub's listing, else declared ones."""
    out = {}
    c = draft.checkpoint
    for a in draft.artifacts:
        key = f"{draft.model_id}/{a.variant}"
        artifact = Artifact.model_validate(model["artifacts"][a.variant])
        use = ArtifactUse(key, artifact, Location(""), ())
        if not c.from_hub:
            out[key] = declared_entry(use)
            continue
        listed = a.files or list(c.files.values())
        files = tuple(RemoteFile(f.path, f.size, f.sha256) for f in listed)
        sizes = [f.size for f in files]
        total = None if None in sizes else sum(s for s in sizes if s is not None)
        request = ArtifactRequest(
            key, c.repo, c.commit, tuple(artifact.files), None, SIZE_TOLERANCE
        )
        out[key] = resolved_entry(use, ArtifactResult(request, c.commit, files, total, c.gated, ()))
    return out


def prove(root: Path, rel: str, text: str, lock: Lock) -> list[Finding]:
    """Loads the registry with the new file and lock in a scratch copy and runs every rule
    about the registry; an error in the new file refuses it. Returns its warnings."""
    with registry_with(root, rel, text, {LOCK_NAME: lock.to_bytes()}) as registry:
        findings = run_rules(
            CheckContext(registry, focus=frozenset()), skip=rules_of_kind("generated")
        )
    mine = [f for f in findings if f.location.file == rel]
    if any(f.severity is Severity.ERROR for f in mine):
        raise RegistryError(sorted(mine, key=Finding.sort_key))
    return mine


def offline_path(repo: str) -> str:
    """How to add the model without the Hub, for errors that say it cannot be reached."""
    return (
        f"without the Hub, add it from a local copy: profilegen model add {repo} "
        "--from-dir DIR --revision SHA (DIR holding config.json and the safetensors index, or "
        "the GGUF file; SHA the 40-hex commit they came from)"
    )


def _derive(opts: AddOptions) -> ModelDraft:
    if opts.from_dir is not None:
        return derive(open_local(opts.from_dir, opts.repo, opts.revision), opts)
    if opts.offline:  # its refusal names --from-dir already
        return derive(open_cached(opts.repo, opts.revision), opts)
    try:
        return derive(open_remote(opts.repo, opts.revision, Deadline.start(opts.timeout)), opts)
    except NetworkError as exc:
        raise NetworkError(f"{exc}; {offline_path(opts.repo)}") from exc


@dataclass(frozen=True)
class ModelAdded:
    """What `model add` derived and (unless a dry run) wrote: the file, its lock entries and
    the warnings the check had for it."""

    draft: ModelDraft
    file: str
    doc: CommentedMap
    text: str
    entries: dict[str, dict[str, Any]]
    warnings: list[Finding]
    dry_run: bool


def add_model(root: Path, opts: AddOptions) -> ModelAdded:
    """Reads the checkpoint, derives the model, proves it and writes it with its lock entries."""
    check_repo(opts.repo)
    registry = open_registry(root)
    draft = _derive(opts)
    rel = f"registry/models/{draft.model_id}.yaml"
    if draft.model_id in registry.models or (root / rel).exists():
        raise UsageError(
            f"model {draft.model_id!r} already exists ({rel}); pass --id to add it as another model"
        )
    doc = document(draft)
    text = dump(doc)
    if opts.dry_run:
        return ModelAdded(draft, rel, doc, text, {}, [], True)
    lock = read_lock(root) or Lock()
    entries = lock_entries(draft, YAML(typ="safe", pure=True).load(text))
    lock.artifacts.update(entries)
    warnings = prove(root, rel, text, lock)
    files = {root / LOCK_NAME: lock.to_bytes(), root / rel: text.encode()}
    write_files(files, root=root)  # both or neither
    return ModelAdded(draft, rel, doc, text, entries, warnings, False)


def run_model_add(root: Path, opts: AddOptions) -> int:
    added = add_model(root, opts)
    if added.dry_run:
        _report_read(added.draft)
        click.echo(added.text, nl=False)
        return 0
    _report(added.draft, added.file, added.doc, added.entries, added.warnings)
    return 0


def _report_read(draft: ModelDraft) -> None:
    c = draft.checkpoint
    read = getattr(c, "bytes_read", None)
    transferred = f" ({read:,} bytes transferred)" if read is not None else ""
    click.echo(f"read {c.where}: {', '.join(draft.read)}{transferred}", err=True)
    for note in draft.facts.notes:
        click.echo(f"note: {note}", err=True)


def _report(
    draft: ModelDraft,
    rel: str,
    doc: CommentedMap,
    entries: dict[str, dict[str, Any]],
    warnings: list[Finding],
) -> None:
    _report_read(draft)
    for finding in warnings:
        click.echo(finding.render(), err=True)
    facts = len(doc["provenance"]["facts"])
    click.echo(f"wrote {rel} ({facts} facts with their source)")
    for key, entry in entries.items():
        how = (
            f"resolved: {len(entry['files'])} file{'s' * (len(entry['files']) != 1)} with sha256"
            if entry["resolved"]
            else "declared facts only: a maintainer runs `profilegen lock` online"
        )
        click.echo(f"locked {key} in {LOCK_NAME} ({how})")
    unsized = any(a.size is None for a in draft.artifacts if a.kind == "main")
    click.echo(
        "next:\n"
        + ("  profilegen lock   # online: the weights' size, which fit needs\n" if unsized else "")
        + f"  profilegen new {draft.model_id}-mine --model {draft.model_id} --rig RIG"
        "   # a first profile, sized by fit\n"
        f"  profilegen show {draft.model_id}   # the facts and where each came from"
    )
