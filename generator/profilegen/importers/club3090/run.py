"""`profilegen import club3090`: read the catalogue, build our entities, prove them, write them."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ...errors import UsageError
from ...registry import KINDS, file_model
from ...units import UNIT_BYTES
from ..emit import document
from ..layout import carry_comments, styles
from .advice import advise
from .benchmarks import Landed, import_benchmarks, imported
from .benchmarks import Registry as BenchRegistry
from .build import Importer
from .catalog import read_catalog
from .curated import CURATED, curated_profiles, keep_curated
from .entities import Catalogue, Note
from .factor import factor
from .names import keep_artifact_ids
from .source import Tree

MARKER = "Imported by `profilegen import club3090` from noonghunna/club-3090"
RIG_GPUS = {"3090": "rtx-3090", "4090": "rtx-4090", "5090": "rtx-5090"}
UNMEASURED = (
    "club-3090 rates this production; its measurements are not recorded in this registry yet, "
    "so it is listed as caveats until an evidence record is added."
)


@dataclass(frozen=True)
class ImportOptions:
    source: Path
    rev: str | None = None
    only: tuple[str, ...] = ()
    dry_run: bool = False


@dataclass
class Plan:
    files: dict[Path, bytes]
    notes: list[Note]
    keys: int
    # BENCHMARKS.md rows that landed as evidence, and on how many profiles.
    evidence_rows: int = 0
    evidence_profiles: int = 0


def plan_import(root: Path, opts: ImportOptions) -> Plan:
    """Every file the import writes (validated), and what it reports; writes nothing."""
    tree = Tree.open(opts.source, opts.rev)
    where, entries = read_catalog(tree)
    known = {e.key for e in entries}
    unknown = sorted(set(opts.only) - known)
    if unknown:
        raise UsageError(
            f"{where} at {tree.rev or 'the work tree'} has no key {', '.join(unknown)}"
        )
    chosen = [e for e in entries if not opts.only or e.key in opts.only]
    importer = Importer(tree, tree.commit[:8] if tree.commit else None)
    for entry in chosen:
        importer.add(entry)
    out = importer.finish()
    advise(tree, where, entries, out)
    keep_artifact_ids(out, lambda ident: _existing(root / "registry" / "models" / f"{ident}.yaml"))
    landed = _benchmarks(tree, entries, out, root)
    resolved = curated_profiles(root)
    files: dict[Path, bytes] = {}
    for kind, ident, data, header in _entities(out, root):
        path = root / "registry" / kind / f"{ident}.yaml"
        existing = _existing(path)
        records = None
        if landed is not None and kind == "profiles" and "upstream_key" in data:
            records = landed.records.get(ident, [])
        merged = _merge(kind, data, existing, records)
        if kind == "profiles" and ident in resolved:
            merged = keep_curated(kind, merged, resolved[ident])
            _with_evidence(merged, records, production=data.get("status") == "production")
        merged = _ordered_like(merged, existing)
        _validate(kind, path, merged, root)
        files[path] = _laid_out(path, kind, merged, header, out)
    rows, profiles = (landed.rows, len(landed.records)) if landed else (0, 0)
    return Plan(files, out.notes, len(chosen), rows, profiles)


def _benchmarks(tree: Tree, entries: list[Any], out: Catalogue, root: Path) -> Landed | None:
    """BENCHMARKS.md rows as evidence of the imported profiles; what does not land is noted."""
    folder = root / "registry"
    rigs = {p.stem: d for p in sorted((folder / "rigs").glob("*.yaml")) if (d := _existing(p))}
    rigs.update({r: _rig(r) for r in out.rigs if r not in rigs})
    gpus = {p.stem: d for p in sorted((folder / "gpus").glob("*.yaml")) if (d := _existing(p))}
    gib = {g: _bytes(d.get("vram")) / UNIT_BYTES["GiB"] for g, d in gpus.items()}
    engines = {p.stem for p in (folder / "engines").glob("*.yaml")} | set(out.engines)
    reg = BenchRegistry(out.profiles, rigs, gib, engines)
    landed = import_benchmarks(tree, entries, reg, out.rev)
    if landed is None:
        return None
    out.rigs.update(landed.new_rigs)
    for line, why in landed.unmapped:
        out.note(f"BENCHMARKS.md:{line}", "unmapped", why)
    for table in landed.others:
        out.note(f"BENCHMARKS.md:{table.first}-{table.last}", "unmapped",
                 f"{table.rows} rows of a table of another shape ({table.header[:60]}), not evidence")  # fmt: skip
    return landed


def _with_evidence(
    profile: dict[str, Any], records: list[dict[str, Any]] | None, *, production: bool
) -> None:
    """The profile's records with the rows imported for it in place of the earlier imports
    (where those stood; after its own records on a first import), so a re-import moves no
    record of its own; a profile upstream rates production is production here only with
    evidence."""
    if records is not None:  # None: no BENCHMARKS.md at this revision, what is recorded stays
        evidence = _replaced_imports(profile.get("evidence", []), records)
        if evidence:
            profile["evidence"] = evidence
        else:
            profile.pop("evidence", None)
    if not production:
        return
    caveats = [c for c in profile.get("caveats", []) if c != UNMEASURED]
    profile["status"] = "production" if profile.get("evidence") else "caveats"
    if not profile.get("evidence"):
        caveats.append(UNMEASURED)
    if caveats:
        profile["caveats"] = caveats
    else:
        profile.pop("caveats", None)


def _replaced_imports(
    evidence: list[dict[str, Any]], records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    placed = False
    before = [r for r in evidence if imported(r)]
    own = [r for r in evidence if not imported(r)]
    records = [_with_added_keys(r, before) for r in records if not _recorded(r, own)]
    for record in evidence:
        if not imported(record):
            out.append(record)
        elif not placed:
            out += records
            placed = True
    return out if placed else out + records


def _recorded(row: dict[str, Any], own: list[dict[str, Any]]) -> bool:
    """Whether a maintainer's record already holds the row's measurement (the same day and the
    same decode speeds): the row is not added a second time."""
    measured = row.get("measured") or {}
    speeds = (measured.get("decode_tps_narrative"), measured.get("decode_tps_code"))
    if None in speeds:
        return False
    return any(
        r.get("date") == row.get("date")
        and (
            (r.get("measured") or {}).get("decode_tps_narrative"),
            (r.get("measured") or {}).get("decode_tps_code"),
        )
        == speeds  # fmt: skip
        for r in own
    )


def _with_added_keys(record: dict[str, Any], before: list[dict[str, Any]]) -> dict[str, Any]:
    """An imported record with the keys a maintainer added to it since (the drafter settings it
    was measured with): the earlier import of the same row, or of the same run, keeps them."""
    same = next((b for b in before if b.get("origin") == record.get("origin")), None) or next(
        (b for b in before if (b.get("date"), b.get("summary"))
         == (record.get("date"), record.get("summary"))), None)  # fmt: skip
    if same is None:
        return record
    return {**record, **{k: v for k, v in same.items() if k not in record}}


def _laid_out(
    path: Path, kind: str, data: dict[str, Any], header: list[str], out: Catalogue
) -> bytes:
    """The new file, laid out as the existing one was: its one-line mappings stay on one line
    and its comments are carried over (those with nowhere to go are noted)."""
    try:
        old = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return document(kind, data, header).encode()
    carried = carry_comments(old, document(kind, data, header, styles(old)))
    for dropped in carried.dropped:
        out.note(path.stem, "note", f"{path.name}: a comment on {dropped}, now gone, is dropped")
    return carried.text.encode()


def _entities(out: Catalogue, root: Path) -> list[tuple[str, str, dict[str, Any], list[str]]]:
    made = f"{MARKER}."
    items: list[tuple[str, str, dict[str, Any], list[str]]] = []
    for ident, build in sorted(out.engines.items()):
        items.append(("engines", ident, build.entity(), [made]))
    for ident, model in sorted(out.models.items()):
        items.append(("models", ident, _served(model, out), [made]))
    for ident, drafter in sorted(out.drafters.items()):
        items.append(("drafters", ident, drafter, [made]))
    for ident, patch in sorted(out.patches.items()):
        items.append(
            (
                "patches",
                ident,
                patch,
                [made, "Files are fetched by pinned URL and checked against their sha256."],
            )
        )
    for rig in sorted(out.rigs):
        if not (root / "registry" / "rigs" / f"{rig}.yaml").is_file():
            items.append(("rigs", rig, _rig(rig), [made]))
    for ident, profile in sorted(factor(out.profiles).items()):
        key = profile.get("upstream_key")
        header = [
            f"{MARKER} ({key})." if key else f"{MARKER}: shared by the profiles that extend it."
        ]
        items.append(("profiles", ident, profile, header))
    return items


def _served(model: dict[str, Any], out: Catalogue) -> dict[str, Any]:
    """The model's served name: the first name its vLLM profiles serve, else its id."""
    for profile in out.profiles.values():
        names = profile.get("serve", {}).get("served_names")
        if profile["model"] == model["id"] and names and profile["engine"].startswith("vllm"):
            return {**model, "served_name": names[0]}
    return model


def _rig(ident: str) -> dict[str, Any]:
    count, _, rest = ident.partition("x")
    card = rest.split("-")[0]
    data: dict[str, Any] = {"id": ident, "name": f"{count}x RTX {card}", "gpu": RIG_GPUS.get(card, "rtx-3090"),
                            "count": int(count)}  # fmt: skip
    if int(count) > 1:
        data["interconnect"] = {"kind": "pcie"}
    return data


def _existing(path: Path) -> dict[str, Any] | None:
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _merge(
    kind: str,
    new: dict[str, Any],
    old: dict[str, Any] | None,
    records: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The import's facts, with what a maintainer curated in the existing file kept, and the
    benchmark rows imported for it."""
    merged = _merge_kept(kind, new, old)
    if kind == "profiles":
        _with_evidence(merged, records, production=new.get("status") == "production")
    if kind == "profiles" and old is not None and _unchanged(merged, old):
        merged["upstream_rev"] = old["upstream_rev"]  # upstream did not change it
    return merged


def _ordered_like(new: Any, old: Any) -> Any:
    """`new` with its keys in the order the existing file has them (new keys last), so a
    re-import changes only what changed."""
    if isinstance(new, dict) and isinstance(old, dict):
        keys = [k for k in old if k in new] + [k for k in new if k not in old]
        return {k: _ordered_like(new[k], old.get(k)) for k in keys}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [_ordered_like(n, o) for n, o in zip(new, old, strict=True)]
    return new


def _merge_kept(kind: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    if old is None:
        return new
    if kind == "patches" and set(_files(old)) <= set(_files(new)):
        # The same bytes (or some of them, applied natively as diffs with markers instead of
        # upstream's installer): keep the URL they were pinned at and how they are applied.
        new = {**new, "source": old["source"]}
        if old.get("steps"):
            new["steps"] = old["steps"]
    if kind == "engines":
        # Imports at several revisions add to an engine's vocabulary; none takes from it.
        for key in ("flags", "kv_cache_dtypes"):
            merged_list = list(new.get(key, []))
            merged_list += [x for x in old.get(key, []) if x not in merged_list]
            new = {**new, key: merged_list}
    if kind == "profiles" or kind == "patches":
        return keep_curated(kind, new, copy.deepcopy(old))
    merged: dict[str, Any] = _deep(old, new)
    if kind == "models":
        merged = keep_curated(kind, merged, old)
        _keep_measured_sizes(merged, old)
        if isinstance(old.get("architecture"), dict) and isinstance(new.get("architecture"), dict):
            # Architecture facts corrected in the registry (from config.json, or shown by a
            # measured boot) win; upstream still fills in the facts the file lacks.
            merged["architecture"] = _deep(new["architecture"], old["architecture"])
    return merged


EXACT_SIZE_TOLERANCE = 0.10


def _keep_measured_sizes(model: dict[str, Any], old: dict[str, Any]) -> None:
    """An artifact size the registry states more precisely than upstream's rounded one stays.

    Upstream's `size_gb` is sometimes GiB in all but name, so a registry size near the figure
    read either way is a correction, not a disagreement.
    """
    for ident, artifact in (model.get("artifacts") or {}).items():
        before = ((old.get("artifacts") or {}).get(ident) or {}).get("size")
        now = artifact.get("size")
        if not (before and now and before != now):
            continue
        # An exact byte count (a measured download) beats a rounded figure a little further.
        exact = isinstance(before, dict) and before.get("unit") == "B"
        near = EXACT_SIZE_TOLERANCE if exact else 0.05
        readings = (_bytes(now), _bytes(now) * UNIT_BYTES["GiB"] / UNIT_BYTES["GB"])
        if any(_close(_bytes(before), b, near) for b in readings):
            artifact["size"] = before


def _bytes(size: Any) -> float:
    try:
        return float(size["value"]) * UNIT_BYTES[str(size["unit"])]
    except (KeyError, TypeError, ValueError):
        return -1.0


def _close(a: float, b: float, near: float = 0.05) -> bool:
    return a > 0 and b > 0 and abs(a - b) <= near * b


def _unchanged(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """The same facts as the existing file (its curated keys and revision aside)."""
    skip = {"upstream_rev", *CURATED["profiles"]}
    return "upstream_rev" in old and {k: v for k, v in new.items() if k not in skip} == {
        k: v for k, v in old.items() if k not in skip
    }


def _files(patch: dict[str, Any]) -> list[tuple[str, str]]:
    source = patch.get("source") or {}
    return sorted((f.get("path"), f.get("sha256")) for f in source.get("files", []))


def _deep(old: Any, new: Any) -> Any:
    """New values win; keys only the old file has (facts upstream does not state) are kept."""
    if isinstance(old, dict) and isinstance(new, dict):
        merged = {k: _deep(old.get(k), v) if k in old else v for k, v in new.items()}
        for key, value in old.items():
            merged.setdefault(key, value)
        return merged
    return new


def _validate(kind: str, path: Path, data: dict[str, Any], root: Path) -> None:
    try:
        file_model(kind).model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        rel = path.relative_to(root).as_posix()
        what = {"patches": "patch"}.get(kind, kind[:-1])
        at = f" at {where}" if where else ""
        raise UsageError(f"{rel}: the imported {what} is not valid{at}: {error['msg']}") from None


__all__ = ["KINDS", "ImportOptions", "Plan", "plan_import"]
