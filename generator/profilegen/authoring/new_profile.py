"""`profilegen new`: a minimal profile that extends a sibling, validated before it is written."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from ..check.scoped import blocking, profile_findings
from ..errors import Finding, ProfilegenError, RegistryError, UsageError, suggest
from ..model import Profile
from ..model.common import ID_PATTERN
from ..registry import Registry, open_registry
from ..registry.yamltext import dump_document
from ..render.targets.compose import render_profile
from ..write import write_atomic
from . import words
from .first_profile import TODO_TITLE, FirstOptions, Proposal, propose
from .scratch import load_with
from .words import TODO_BEST_FOR

MODELINE = "yaml-language-server: $schema=../../schema/profile.schema.json"
# Keys `new` owns: the id names the file and the parent is --from.
RESERVED = frozenset({"id", "extends", "abstract"})
KEY_PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
PORT_FALLBACK = 8000
PORT_SEARCH = 2000


@dataclass(frozen=True)
class NewOptions:
    new_id: str
    sibling: str | None
    sets: tuple[str, ...] = ()
    # The first-profile path (no sibling): a model's first profile on a rig.
    first: FirstOptions | None = None


def parse_sets(sets: tuple[str, ...]) -> list[tuple[list[str], Any]]:
    """`a.b=value` pairs; values are YAML scalars (131072 is a number, true a bool) or lists."""
    parsed = []
    for item in sets:
        key, sep, raw = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(KEY_PART.fullmatch(p) for p in parts):
            raise UsageError(
                f"--set {item!r}: expected dotted.key=value (e.g. envelope.max_model_len=131072)"
            )
        if parts[0] in RESERVED:
            raise UsageError(f"--set {item!r}: `{parts[0]}` is set by `profilegen new` itself")
        parsed.append((parts, scalar(raw)))
    return parsed


def scalar(raw: str) -> Any:
    """A value as YAML reads it, but text that YAML would turn into a mapping stays text."""
    try:
        value = YAML(typ="safe", pure=True).load(raw)
    except YAMLError:
        return raw
    # `best_for=a: b` means the words, not a mapping; nested keys are spelt with dots instead.
    if isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)
    ):
        return raw
    return "" if value is None and not raw.strip() else value


def _flow(value: Any) -> Any:
    """Nested values in flow style, like the hand-written files: `envelope: {tp: 2}`."""
    if isinstance(value, dict):
        out = CommentedMap((k, _flow(v)) for k, v in value.items())
        out.fa.set_flow_style()
        return out
    if isinstance(value, list):
        seq = CommentedSeq(_flow(v) for v in value)
        seq.fa.set_flow_style()
        return seq
    return value


def _assign(doc: CommentedMap, parts: list[str], value: Any) -> None:
    node = doc
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, CommentedMap):
            child = CommentedMap()
            child.fa.set_flow_style()
            node[part] = child
        node = child
    node[parts[-1]] = _flow(value)


def _raw_profiles(registry: Registry) -> dict[str, dict[str, Any]]:
    return {
        doc.data["id"]: doc.data
        for kind, doc in registry.documents
        if kind == "profiles" and isinstance(doc.data, dict) and isinstance(doc.data.get("id"), str)
    }


def _ancestors(raw: dict[str, dict[str, Any]], ident: str) -> list[str]:
    """`ident` and the profiles it extends, nearest first (a cycle stops the walk)."""
    chain: list[str] = []
    current: Any = ident
    while isinstance(current, str) and current in raw and current not in chain:
        chain.append(current)
        current = raw[current].get("extends")
    return chain


def _sibling_port(registry: Registry, raw: dict[str, dict[str, Any]], ident: str) -> int:
    """The port the sibling serves on; for an abstract base, the lowest of its descendants'."""
    for name in _ancestors(raw, ident):
        port = raw[name].get("port")
        if isinstance(port, int):
            return port
    family = [p.port for p in registry.profiles.values() if ident in _ancestors(raw, p.id)]
    return min(family, default=PORT_FALLBACK)


def free_port(used: set[int], near: int) -> int:
    """The free port closest to `near`, above it on a tie (upstream numbers grow)."""
    for distance in range(1, PORT_SEARCH):
        for port in (near + distance, near - distance):
            if 1024 <= port <= 65535 and port not in used:
                return port
    raise ProfilegenError(f"no free port within {PORT_SEARCH} of {near}; pass --set port=N")


def _resolve_sibling(registry: Registry, raw: dict[str, dict[str, Any]], name: str) -> str:
    if name in raw:
        return name
    by_key = [p.id for p in registry.profiles.values() if p.upstream_key == name]
    if by_key:
        return by_key[0]
    close = suggest(name, sorted(raw))
    hint = f" (did you mean {close!r}?)" if close else " (see `profilegen list`)"
    raise UsageError(f"no profile {name!r} to start from{hint}")


def _check_new_id(registry: Registry, raw: dict[str, dict[str, Any]], new_id: str) -> None:
    if not re.match(ID_PATTERN, new_id):
        raise UsageError(f"{new_id!r} is not a valid id (lower-case letters, digits, . _ -)")
    path = registry.root / "registry" / "profiles" / f"{new_id}.yaml"
    if new_id in raw or path.exists():
        raise UsageError(f"profile {new_id!r} already exists ({path.relative_to(registry.root)})")


def _dump(doc: CommentedMap) -> str:
    return dump_document(doc)


def _assign_plain(data: dict[str, Any], parts: list[str], value: Any) -> None:
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


# Keys of a first profile in the order the hand-written files have them.
FIRST_ORDER = ("title", "status", "model", "weights", "mmproj", "engine", "rig", "port")


def build_first(registry: Registry, opts: NewOptions, first: FirstOptions) -> tuple[str, Proposal]:
    """A whole profile for a model that has none: fit proposes the envelope."""
    raw = _raw_profiles(registry)
    _check_new_id(registry, raw, opts.new_id)
    sets = parse_sets(opts.sets)
    proposal = propose(registry, opts.new_id, first, sets, _assign_plain)
    data = dict(proposal.data)
    if not any(parts == ["title"] for parts, _v in sets):
        data["title"] = _first_title(registry, opts.new_id, data)
    if not any(parts == ["port"] for parts, _v in sets):
        used = {p["port"] for p in raw.values() if isinstance(p.get("port"), int)}
        data["port"] = data["port"] if data["port"] not in used else free_port(used, data["port"])
    doc = CommentedMap()
    doc["id"] = opts.new_id
    for key in (*FIRST_ORDER, *[k for k in data if k not in FIRST_ORDER]):
        if key in data:
            value = data[key]
            doc[key] = _block(value) if key in ("envelope", "serve") else _flow(value)
    doc.yaml_set_start_comment(
        f"{MODELINE}\n"
        f"Created by `profilegen new --model {first.model} --rig {first.rig}`; the envelope is "
        "fit's proposal:\n" + "\n".join(f"  {r}" for r in proposal.reasons) + "\n"
        "TODO: title and best_for (check fails until they say what the profile is), caveats,\n"
        "and an evidence record once it has run on the rig."
    )
    return _dump(doc), proposal


def _first_title(registry: Registry, ident: str, data: dict[str, Any]) -> str:
    """The TODO title from the proposed facts (the generic one where they do not validate:
    the check that follows says what is wrong)."""
    try:
        return f"TODO: {words.title(registry, Profile.model_validate({'id': ident, **data}))}"
    except (ValidationError, KeyError):
        return TODO_TITLE


def _block(value: dict[str, Any]) -> CommentedMap:
    """A block mapping whose nested values are in flow style (`sampler: {top_k: 20}`)."""
    return CommentedMap((k, _flow(v)) for k, v in value.items())


def build_document(registry: Registry, opts: NewOptions) -> tuple[str, str]:
    """The new file's text (modeline, a header, then only what differs) and the sibling's id."""
    raw = _raw_profiles(registry)
    _check_new_id(registry, raw, opts.new_id)
    assert opts.sibling is not None
    sibling = _resolve_sibling(registry, raw, opts.sibling)
    sets = parse_sets(opts.sets)
    used = {p["port"] for p in raw.values() if isinstance(p.get("port"), int)}
    doc = CommentedMap()
    doc["id"] = opts.new_id
    doc["extends"] = sibling
    doc["title"] = TODO_TITLE  # until the profile's own facts are known, below
    doc["status"] = "incubating"
    doc["port"] = free_port(used, _sibling_port(registry, raw, sibling))
    if sibling in registry.profiles:  # an abstract base is no sibling a user could pick
        doc["siblings"] = _flow([sibling])
    for parts, value in sets:
        _assign(doc, parts, value)
    doc.setdefault("best_for", TODO_BEST_FOR)  # in the profile's own words, below
    doc.yaml_set_start_comment(
        f"{MODELINE}\n"
        f"Created by `profilegen new --from {sibling}`: everything not stated here is inherited.\n"
        "TODO: title, best_for, caveats and an evidence record from your rig."
    )
    _describe(registry, doc, sibling, {parts[0] for parts, _value in sets})
    return _dump(doc), sibling


def _describe(registry: Registry, doc: CommentedMap, sibling: str, given: set[str]) -> None:
    """The title and best_for placeholders in the new profile's own words: what it resolves
    to (its sibling's facts with the overrides) says them, never the sibling's text."""
    rel = f"registry/profiles/{doc['id']}.yaml"
    resolved = load_with(registry.root, rel, _dump(doc))
    profile = resolved.profiles[doc["id"]]
    if "title" not in given:
        doc["title"] = f"TODO: {words.title(resolved, profile)}"
    if "best_for" not in given:
        doc["best_for"] = words.best_for(resolved, profile, sibling)


def _validate(root: Path, rel: str, text: str) -> list[Finding]:
    """Proves the new file with every check before it is written; returns its warnings.

    The whole registry is loaded with the new file in a scratch copy (nothing real is
    touched), then every rule about the registry runs against the real root's lock and
    vendored files. Any error that lands in the new file, or on a value it inherits,
    refuses the profile.
    """
    registry = load_with(root, rel, text)
    registry.root = root
    ident = Path(rel).stem
    # `new` writes TODO placeholders on purpose; the next steps it prints say what to fill in.
    mine = profile_findings(registry, [ident], skip=frozenset({"placeholder"}))
    if blocking(mine):
        raise RegistryError(sorted(mine, key=Finding.sort_key))
    # Render the profile too, so a template or verify failure shows now, not in `render --all`.
    render_profile(registry, registry.profiles[ident])
    return mine


@dataclass(frozen=True)
class NewProfile:
    """What `new` wrote: the file, how the profile came about, and its warnings."""

    profile: str
    file: str
    lines: int
    how: str
    reasons: tuple[str, ...]
    findings: tuple[Finding, ...]


def create_profile(root: Path, opts: NewOptions) -> NewProfile:
    """Builds the profile, proves it (check and render) and writes it; nothing on a refusal."""
    registry = open_registry(root)
    rel = f"registry/profiles/{opts.new_id}.yaml"
    reasons: tuple[str, ...] = ()
    if opts.first is not None:
        text, proposal = build_first(registry, opts, opts.first)
        how = f"{opts.first.model} on {opts.first.rig}"
        reasons = tuple(proposal.reasons)
    else:
        text, sibling = build_document(registry, opts)
        how = f"extends {sibling}"
    warnings = _validate(root, rel, text)
    write_atomic(root / rel, text.encode(), root=root)
    return NewProfile(opts.new_id, rel, text.count("\n"), how, reasons, tuple(warnings))


def run_new(root: Path, opts: NewOptions) -> int:
    made = create_profile(root, opts)
    for finding in made.findings:
        click.echo(finding.render(), err=True)
    click.echo(f"wrote {made.file} ({made.lines} lines, {made.how})")
    if made.reasons:
        click.echo("\n".join(f"  {r}" for r in made.reasons))
    rel = made.file
    click.echo(
        "\n".join(
            [
                "next:",
                f"  1. edit {rel}: a real title; best_for, caveats;",
                "     siblings: the profiles a user would compare it with;",
                "     an evidence record (date, rig, source, measured) once it has run on a rig;",
                "     status stays incubating until a maintainer promotes it",
                "  2. profilegen render --all   # compose/ and docs/ for the new profile",
                "  3. profilegen check          # what CI runs on the pull request",
                f"  4. commit {rel}, compose/{made.profile}/ and docs/",
            ]
        )
    )
    return 0
