"""`profilegen fit log --record`: a measured boot appended to a profile's evidence.

The profile's file keeps its comments and order (ruamel round-trip); the new record is
proven by loading the whole registry with it before the file is replaced.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ..errors import UsageError
from ..registry import Registry
from ..registry.yamltext import dump_document, load_document
from ..write import write_atomic
from .scratch import load_with


def _flow(value: Any) -> Any:
    if isinstance(value, dict):
        out = CommentedMap((k, _flow(v)) for k, v in value.items())
        out.fa.set_flow_style()
        return out
    return _quoted(value)


def _quoted(value: Any) -> Any:
    """Strings double-quoted, as the registry writes them."""
    return DoubleQuotedScalarString(value) if isinstance(value, str) else value


def _unique_key(registry: Registry, key: str) -> str:
    used = {ev.key for p in registry.profiles.values() for ev in p.evidence if ev.key}
    if key not in used:
        return key
    n = 2
    while f"{key[:76]}-{n}" in used:
        n += 1
    return f"{key[:76]}-{n}"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _document(text: str, record: dict[str, Any], *, replace: bool) -> str | None:
    """The file with the record added; with `replace`, in place of the record of its key
    (None when that record already says the same)."""
    doc = load_document(text)
    if not isinstance(doc, CommentedMap):
        raise UsageError("the profile file is not a YAML mapping")
    entry = CommentedMap((k, v if k == "key" else _flow(v)) for k, v in record.items())
    evidence = doc.get("evidence")
    if not isinstance(evidence, CommentedSeq):
        evidence = CommentedSeq()
        doc["evidence"] = evidence
    same_key = [i for i, e in enumerate(evidence) if replace and e.get("key") == record["key"]]
    if not same_key:
        evidence.append(entry)
    elif _plain(evidence[same_key[0]]) == _plain(record):
        return None
    else:
        evidence[same_key[0]] = entry
    return dump_document(doc)


def record_evidence(
    registry: Registry, profile_id: str, record: dict[str, Any], *, replace: bool = False
) -> str:
    """Appends the record to the profile's own file; returns that file's path (relative).
    With `replace`, a record of the same key in that file is replaced where it stands (and
    the file is left alone when it already says the same): a boot recorded again."""
    rel = registry.where("profiles", profile_id, ("id",)).file
    path = registry.root / rel
    if not replace:
        record = {**record, "key": _unique_key(registry, str(record["key"]))}
    text = _document(path.read_text(encoding="utf-8"), record, replace=replace)
    if text is None:
        return rel
    load_with(registry.root, rel, text)  # a record that breaks the registry is refused
    write_atomic(path, text.encode(), root=registry.root)
    return rel


def recorded_as(registry: Registry, marker: str) -> tuple[str, str] | None:
    """(file, record) of the evidence whose source carries `marker` (a log's or a run's
    digest, "sha256 0123..."), if the registry has one: a fact is recorded once."""
    for profile_id, profile in sorted(registry.profiles.items()):
        for i, ev in enumerate(profile.evidence):
            if marker in ev.source:
                rel = registry.where("profiles", profile_id, ("id",)).file
                return rel, ev.key or f"{profile_id} evidence #{i + 1}"
    return None
