"""`profilegen upgrade ENGINE_ID --to VERSION`: what the next release would refuse, by profile.

For every profile on the engine: the flags, values, JSON keys and variables of each explain
scenario judged by the new release's facts (what the old release took and the new one does
not), the patch chain rehearsed on the new release's source (refused steps; steps whose
marker the new source already carries, so that the patch's `drop_when` is met), and the
defaults that size memory which moved for flags the profile leaves to the release.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, UsageError
from ..explain.core import Explanation
from ..explain.scenarios import explain_profiles
from ..model import Engine, Profile
from ..model.facts import EngineFacts
from ..registry import Registry
from ..registry.enginefacts import facts_path
from ..registry.files import MAX_REGISTRY_FILE, read_inside
from ..render import Rendered, render_profile_cached
from ..write import write_files
from .engine import FAMILIES, dump, release_of
from .judge import judge_argv, judge_env, server_words
from .rehearsals import Plan, run
from .rehearse import UNAVAILABLE

# Flags whose release default sizes the KV pool or what is charged beside it.
MEMORY_FLAGS = (
    "--gpu-memory-utilization",
    "--max-num-seqs",
    "--max-num-batched-tokens",
    "--block-size",
    "--kv-cache-dtype",
    "--max-model-len",
    "--swap-space",
    "--cpu-offload-gb",
    "--kv-cache-memory-bytes",
    "--mem-fraction-static",
    "--cuda-graph-max-bs",
    "--ctx-size",
    "--batch-size",
    "--ubatch-size",
    "--cache-ram",
)


# A release as `--to` may spell it: the engine ids' own `v0.33.0` or `b11434`, or bare.
RELEASE = re.compile(r"[vb]?(?P<version>[0-9][0-9A-Za-z.+!-]*)")


@dataclass
class Verdict:
    profile: str
    refused: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)
    # Why its patches could not be tried on the new release: its verdict is incomplete.
    not_rehearsed: list[str] = field(default_factory=list)


def release_version(text: str) -> str:
    """The release `--to` names, as the package index spells it: `v0.33.0` and `0.33.0` are
    vLLM 0.33.0, `b11434` and `11434` llama.cpp build 11434."""
    match = RELEASE.fullmatch(text.strip())
    if match is None:
        raise UsageError(
            f"--to {text!r} is not a release: give its version as the engine ids spell it "
            "(0.33.0, v0.33.0, b11434)"
        )
    return match.group("version")


def old_version(engine: Engine) -> str:
    """The release the entry runs (its family's reading of the image), else its version."""
    release = release_of(engine)
    return release.version if release is not None else engine.version or ""


def new_engine_id(engine: Engine, version: str) -> str:
    """The id of the entry for `version`: the old id with its version replaced."""
    old = old_version(engine)
    if old and old in engine.id:
        return engine.id.replace(old, version)
    return f"{engine.id}-{version}"


def compare(registry: Registry, engine: Engine, new: EngineFacts, offline: bool) -> list[Verdict]:
    """Each profile of `engine` judged by the new release (`new`, its facts). Every scenario
    of every profile is explained in one batch (a few boxes), not in a box of its own."""
    old = registry.facts.get(engine.id)
    verdicts = {p.id: Verdict(p.id) for p in registry.concrete_profiles() if p.engine == engine.id}
    rendered = {pid: render_profile_cached(registry, registry.profiles[pid]) for pid in verdicts}
    explained = explain_profiles(registry, rendered)
    for pid, verdict in verdicts.items():
        _arguments(
            registry, registry.profiles[pid], rendered[pid], explained[pid], old, new, verdict
        )
    _patches(registry, engine, new, list(verdicts), offline, verdicts)
    return [verdicts[pid] for pid in sorted(verdicts)]


def _arguments(
    registry: Registry,
    p: Profile,
    rendered: Rendered,
    runs: list[Explanation],
    old: EngineFacts | None,
    new: EngineFacts,
    verdict: Verdict,
) -> None:
    prefixes = FAMILIES[registry.engines[p.engine].kind].ENV_PREFIXES
    passed: set[str] = set()
    for run_ in runs:
        if not run_.launched:
            continue
        argv = server_words(rendered, run_.argv)
        passed |= {w.split("=", 1)[0] for w in argv if w.startswith("-")}
        before = _said(old, prefixes, argv, run_.env) if old is not None and old.known else set()
        for problem in judge_argv(new, argv) + judge_env(new, prefixes, run_.env):
            text = problem.message + (f" ({problem.hint})" if problem.hint else "")
            if problem.message in before:
                continue
            target = verdict.refused if problem.severity.value == "error" else verdict.warnings
            if text not in target:
                target.append(text)
    if old is not None and old.known:
        verdict.warnings += moved_defaults(old, new, passed)


def _said(
    facts: EngineFacts, prefixes: tuple[str, ...], argv: tuple[str, ...], env: dict[str, str]
) -> set[str]:
    problems = judge_argv(facts, argv) + judge_env(facts, prefixes, env)
    return {p.message for p in problems}


def moved_defaults(old: EngineFacts, new: EngineFacts, passed: set[str]) -> list[str]:
    out = []
    for flag in MEMORY_FLAGS:
        before, after = old.flags.get(flag), new.flags.get(flag)
        if before is None or after is None or flag in passed:
            continue
        if before.default != after.default:
            out.append(
                f"the default of {flag} moves from {before.default!r} to {after.default!r} "
                "(the profile leaves it to the release: its memory sizing changes)"
            )
    return out


def _patches(
    registry: Registry,
    engine: Engine,
    new: EngineFacts,
    ids: list[str],
    offline: bool,
    verdicts: dict[str, Verdict],
) -> None:
    patched = [pid for pid in ids if registry.profiles[pid].patches]
    if not patched:
        return
    if FAMILIES[engine.kind].PACKAGE is None:
        for pid in patched:
            verdicts[pid].not_rehearsed.append(
                f"its patches: {engine.kind}'s release is compiled; patches apply to a source build"
            )
        return
    plan = Plan({engine.id: patched}, [])
    results, _unavailable = run(registry, plan, offline, lambda _: new, keep_going=True)
    for result in results:
        verdict = verdicts[result.profile]
        if result.verdict in (UNAVAILABLE, "not-rehearsed"):
            verdict.not_rehearsed.append(f"its patches: {result.message}")
        elif result.verdict == "refused":
            verdict.refused += [f"patch refused: {r}" for r in result.refusals]
        for said in result.said:
            match = re.match(r"^([^/\s]+)/\S+: already applied$", said)
            if match:
                verdict.drop.append(f"{match.group(1)}: the new release already carries it")


def report(engine: Engine, version: str, verdicts: list[Verdict], fmt: str) -> tuple[str, int]:
    """The report and its exit code: 2 when a profile's patches could not be rehearsed (its
    verdict is unknown, never `ok`), else 1 when a profile would be refused."""
    refused = [v for v in verdicts if v.refused]
    untried = [v for v in verdicts if v.not_rehearsed]
    if fmt == "json":
        data = {
            "engine": engine.id,
            "to": version,
            "profiles": [asdict(v) for v in verdicts],
            "refused": [v.profile for v in refused],
            "not_rehearsed": [v.profile for v in untried],
        }
        text = json.dumps(data, indent=2)
    else:
        lines = []
        for v in verdicts:
            lines.append(f"{v.profile}: {_status(v)}")
            lines += [f"  refuses: {r}" for r in v.refused]
            lines += [f"  not rehearsed: {n}" for n in v.not_rehearsed]
            lines += [f"  warns: {w}" for w in v.warnings]
            lines += [f"  drop: {d}" for d in v.drop]
        lines.append(
            f"upgrade {engine.id} -> {version}: {len(refused)} of {len(verdicts)} profile(s) "
            f"refused, {len(untried)} not rehearsed"
            + (" (their patches could not be tried: no verdict on them)" if untried else "")
        )
        text = "\n".join(lines)
    if untried:
        return text, EXIT_USAGE
    return text, EXIT_FINDINGS if refused else EXIT_OK


def _status(v: Verdict) -> str:
    if v.refused:
        return "refused" + ("; its patches not rehearsed" if v.not_rehearsed else "")
    return "not rehearsed" if v.not_rehearsed else "ok"


def write_entry(registry: Registry, engine: Engine, new: EngineFacts, version: str) -> list[Path]:
    """The new engine entry (the old one's file with its release replaced) and its facts."""
    root = registry.root
    old = read_inside(root, root / registry.where("engines", engine.id).file, MAX_REGISTRY_FILE)
    text = respelled(old.decode("utf-8"), engine, new.engine, version)
    return write_files(
        {
            root / "registry" / "engines" / f"{new.engine}.yaml": text.encode(),
            facts_path(root, new.engine): dump(new),
        },
        root=root,
    )


def respelled(text: str, engine: Engine, new_id: str, version: str) -> str:
    """The old entry's text for the new release: id, tag, version and name moved on."""
    old = old_version(engine)
    lines = text.splitlines()
    out = []
    for line in lines:
        key = line.split(":", 1)[0]
        if key in ("id", "tag", "version", "name") and old:
            line = line.replace(old, version)
        if key == "id":
            line = f"id: {new_id}"
        out.append(line)
    note = (
        f"# Added by `profilegen upgrade {engine.id} --to {version}` from {engine.id}: its "
        "memory facts are the old release's until measured."
    )
    head = 1 if out and out[0].startswith("# yaml-language-server") else 0
    return "\n".join([*out[:head], note, *out[head:]]) + "\n"
