"""Which profiles are rehearsed on which source tree, and the report of the run."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, UsageError
from ..hub.patchfiles import MissingPatchFiles, collect_patch_files
from ..model import Profile
from ..model.facts import EngineFacts
from ..registry import Registry, find_profile
from ..render import Rendered, render_profile_cached
from ..render.manifest import manifest_bytes
from .engine import FAMILIES
from .rehearse import UNAVAILABLE, Rehearsal, patched, rehearse_profile
from .releases import ReleaseError
from .sources import tree


@dataclass(frozen=True)
class Plan:
    """The profiles to rehearse, by engine, and those that cannot be (with why)."""

    by_engine: dict[str, list[str]]
    skipped: list[Rehearsal]


def plan(registry: Registry, names: list[str]) -> Plan:
    """Named profiles (all patched ones when none is named), grouped by engine."""
    ids = [find_profile(registry, n).id for n in names] or [
        p.id for p in registry.concrete_profiles() if patched(registry, p)
    ]
    by_engine: dict[str, list[str]] = {}
    skipped = []
    for pid in ids:
        profile = registry.profiles[pid]
        facts = registry.facts.get(profile.engine)
        why = _why_not(registry, profile.engine, facts)
        if not patched(registry, profile):
            skipped.append(Rehearsal(pid, profile.engine, "not-rehearsed", "it has no patches"))
        elif why:
            skipped.append(Rehearsal(pid, profile.engine, "not-rehearsed", why))
        else:
            by_engine.setdefault(profile.engine, []).append(pid)
    return Plan(by_engine, skipped)


def _why_not(registry: Registry, engine_id: str, facts: EngineFacts | None) -> str | None:
    if facts is None:
        return f"{engine_id} has no facts file (profilegen engine facts {engine_id})"
    if not facts.known:
        return f"{engine_id} has no public release: {facts.none}"
    if getattr(FAMILIES[registry.engines[engine_id].kind], "PACKAGE", None) is None:
        return f"{engine_id}: its release is compiled; patches apply to a source build"
    return None


def run(
    registry: Registry,
    work: Plan,
    offline: bool,
    facts_for: Callable[[str], EngineFacts] | None = None,
    keep_going: bool = False,
) -> tuple[list[Rehearsal], list[str]]:
    """Each planned profile rehearsed; engines whose source cannot be had are listed, and each
    of their profiles is a rehearsal that says so (never left out of the count)."""
    results: list[Rehearsal] = []
    unavailable = []
    for engine_id, ids in sorted(work.by_engine.items()):
        facts = facts_for(engine_id) if facts_for else registry.facts[engine_id]
        package = FAMILIES[registry.engines[engine_id].kind].PACKAGE
        try:
            source = tree(facts, package, offline=offline)
        except ReleaseError as exc:
            unavailable.append(f"{engine_id}: cannot get its source: {exc}")
            why = f"cannot get the source of {engine_id}: {exc}"
            results += [Rehearsal(pid, engine_id, UNAVAILABLE, why) for pid in ids]
            continue
        results += _same_chains_once(registry, ids, source, keep_going, offline)
    return results, unavailable


def _same_chains_once(
    registry: Registry, ids: list[str], source: Path, keep_going: bool, offline: bool
) -> list[Rehearsal]:
    """Profiles whose patch chains are the same (files, steps, order, activation values) are
    one rehearsal, reported for each of them."""
    seen: dict[str, Rehearsal] = {}
    out = []
    for pid in ids:
        profile = registry.profiles[pid]
        rendered = render_profile_cached(registry, profile)
        key = _chain_key(registry, profile.id, rendered)
        if key not in seen:
            missing = missing_patch_files(registry, profile, offline)
            seen[key] = (
                Rehearsal(pid, profile.engine, UNAVAILABLE, missing)
                if missing
                else rehearse_profile(registry, profile, rendered, source, keep_going)
            )
        out.append(replace(seen[key], profile=pid))
    return out


def missing_patch_files(registry: Registry, profile: Profile, offline: bool) -> str | None:
    """Why the profile's patch files cannot all be had (vendored, cached or, online,
    downloaded), in one line naming each file; None when every one is here."""
    try:
        collect_patch_files(registry, list(profile.patches), offline=offline)
    except MissingPatchFiles as exc:
        files = "; ".join(f"{m.patch}/{m.path}: {m.reason}" for m in exc.missing)
        return f"cannot get its patch files ({files})"
    return None


def _chain_key(registry: Registry, pid: str, rendered: Rendered) -> str:
    manifest = json.loads(manifest_bytes(rendered.manifest))
    manifest.pop("profile", None)
    profile = registry.profiles[pid]
    switches = sorted(
        (a.env, str(a.default))
        for patch_id in profile.patches
        if (a := registry.patches[patch_id].activation) is not None
    )
    overrides = {k: v for k, v in profile.env.items() if k in dict(switches)}
    return json.dumps([manifest, switches, sorted(overrides.items(), key=str)], sort_keys=True)


def report(
    results: Iterable[Rehearsal], skipped: list[Rehearsal], unavailable: list[str], fmt: str
) -> tuple[str, int]:
    """The report text and the exit code: 2 when a profile's patch files or its engine's
    source could not be had (its verdict is unknown), else 1 when a profile is refused."""
    done = sorted(results, key=lambda r: r.profile)
    not_had = [r for r in done if r.verdict == UNAVAILABLE]
    if fmt == "json":
        rows = [asdict(r) for r in [*done, *skipped]]
        data = {
            "rehearsals": rows,
            "unavailable": unavailable,
            "not_rehearsed": [r.profile for r in [*not_had, *skipped]],
        }
        text = json.dumps(data, indent=2)
    else:
        lines = [_line(r) for r in done] + [_line(r) for r in skipped]
        lines.append(summary(done, skipped))
        text = "\n".join(lines)
    if not_had:
        return text, EXIT_USAGE
    return text, EXIT_FINDINGS if any(r.verdict == "refused" for r in done) else EXIT_OK


def summary(done: list[Rehearsal], skipped: list[Rehearsal]) -> str:
    """`rehearse: A apply, R refused, N not rehearsed (why)`: every profile is counted once."""
    counts = {v: sum(r.verdict == v for r in done) for v in ("applies", "refused", UNAVAILABLE)}
    text = (
        f"rehearse: {counts['applies']} apply, {counts['refused']} refused, "
        f"{counts[UNAVAILABLE] + len(skipped)} not rehearsed"
    )
    why = []
    if counts[UNAVAILABLE]:
        why.append(f"{counts[UNAVAILABLE]} whose patch files or source could not be had")
    if skipped:
        why.append(f"{len(skipped)} that profilegen cannot rehearse")
    return text + (f" ({'; '.join(why)})" if why else "")


def _line(r: Rehearsal) -> str:
    head = f"{r.profile} ({r.engine}): "
    if r.verdict == "applies":
        return head + f"applies; {len(r.compiled)} changed file(s) byte-compiled"
    if r.verdict == "refused":
        return head + f"refused: {r.message}"
    return head + f"not rehearsed: {r.message}"


def check_named(work: Plan, names: list[str]) -> None:
    """A profile named on the command line that cannot be rehearsed is a usage error."""
    if names and work.skipped:
        first = work.skipped[0]
        raise UsageError(f"cannot rehearse {first.profile}: {first.message}")
