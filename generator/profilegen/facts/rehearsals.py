"""Which profiles are rehearsed on which source tree, and the report of the run."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, UsageError
from ..model.facts import EngineFacts
from ..registry import Registry, find_profile
from ..render import Rendered, render_profile
from ..render.manifest import manifest_bytes
from .engine import FAMILIES
from .rehearse import Rehearsal, patched, rehearse_profile
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
    """Each planned profile rehearsed; engines whose source cannot be had are listed."""
    results: list[Rehearsal] = []
    unavailable = []
    for engine_id, ids in sorted(work.by_engine.items()):
        facts = facts_for(engine_id) if facts_for else registry.facts[engine_id]
        package = FAMILIES[registry.engines[engine_id].kind].PACKAGE
        try:
            source = tree(facts, package, offline=offline)
        except ReleaseError as exc:
            unavailable.append(f"{engine_id}: cannot get its source: {exc}")
            continue
        results += _same_chains_once(registry, ids, source, keep_going)
    return results, unavailable


def _same_chains_once(
    registry: Registry, ids: list[str], source: Path, keep_going: bool
) -> list[Rehearsal]:
    """Profiles whose patch chains are the same (files, steps, order, activation values) are
    one rehearsal, reported for each of them."""
    seen: dict[str, Rehearsal] = {}
    out = []
    for pid in ids:
        profile = registry.profiles[pid]
        rendered = render_profile(registry, profile)
        key = _chain_key(registry, profile.id, rendered)
        if key not in seen:
            seen[key] = rehearse_profile(registry, profile, rendered, source, keep_going)
        out.append(replace(seen[key], profile=pid))
    return out


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
    """The report text and the exit code: 1 when a profile is refused, 2 when a named profile
    or an engine's source could not be rehearsed."""
    done = sorted(results, key=lambda r: r.profile)
    if fmt == "json":
        rows = [asdict(r) for r in [*done, *skipped]]
        text = json.dumps({"rehearsals": rows, "unavailable": unavailable}, indent=2)
    else:
        lines = [_line(r) for r in done] + [_line(r) for r in skipped] + unavailable
        counts = {v: sum(r.verdict == v for r in done) for v in ("applies", "refused")}
        lines.append(
            f"rehearse: {counts['applies']} apply, {counts['refused']} refused, "
            f"{len(skipped)} not rehearsed"
            + (f", {len(unavailable)} engine(s) without source" if unavailable else "")
        )
        text = "\n".join(lines)
    if unavailable or any(r.verdict == "unavailable" for r in done):
        return text, EXIT_USAGE
    return text, EXIT_FINDINGS if any(r.verdict == "refused" for r in done) else EXIT_OK


def _line(r: Rehearsal) -> str:
    head = f"{r.profile} ({r.engine}): "
    if r.verdict == "applies":
        return head + f"applies; {len(r.compiled)} changed file(s) byte-compiled"
    if r.verdict == "refused":
        return head + f"refused: {r.message}"
    if r.verdict == "unavailable":
        return head + f"not rehearsed: {r.message}"
    return head + f"not rehearsed: {r.message}"


def check_named(work: Plan, names: list[str]) -> None:
    """A profile named on the command line that cannot be rehearsed is a usage error."""
    if names and work.skipped:
        first = work.skipped[0]
        raise UsageError(f"cannot rehearse {first.profile}: {first.message}")
