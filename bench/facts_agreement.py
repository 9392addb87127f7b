"""The vLLM facts against vLLM's own parser: every flag, every choice, every negation, and
every launching profile-scenario of the catalogue, judged both ways (a maintainer's proof;
needs the release's environment in the cache, built by `profilegen engine facts`).

    .venv/bin/python bench/facts_agreement.py vllm-v0.27.1 [--as 0.33.0]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from profilegen.errors import Severity
from profilegen.explain.core import explain
from profilegen.explain.scenarios import scenarios_for
from profilegen.facts.engine import build_facts, release_of
from profilegen.facts.judge import judge_argv, server_words
from profilegen.facts.releases import environment
from profilegen.model.facts import EngineFacts
from profilegen.registry import open_registry
from profilegen.render import render_profile

PARSE = Path(__file__).resolve().parents[1] / "generator/profilegen/facts/probes/vllm_parse.py"


def flag_cases(facts: EngineFacts) -> list[tuple[list[str], bool]]:
    """Command lines the facts say are accepted (True) or refused (False)."""
    cases: list[tuple[list[str], bool]] = [(["--no-such-flag-at-all"], False)]
    for flag, spec in sorted(facts.flags.items()):
        if spec.arity == "0":
            cases.append(([flag], True))
        for negation in spec.negation:
            cases.append(([negation], True))
        for choice in spec.choices or []:
            cases.append(([flag, choice], True))
        if spec.choices:
            cases.append(([flag, "no-such-choice"], False))
    for alias, flag in sorted(facts.aliases.items()):
        if facts.flags[flag].arity == "0":
            cases.append(([alias], True))
    return cases


def scenario_cases(root: Path, engine_id: str, facts: EngineFacts) -> list[tuple[list[str], bool]]:
    registry = open_registry(root)
    cases = []
    for profile in registry.concrete_profiles():
        if profile.engine != engine_id:
            continue
        rendered = render_profile(registry, profile)
        for scenario in scenarios_for(registry, profile, rendered):
            run = explain(registry, profile, scenario, rendered)
            if run.launched:
                argv = server_words(rendered, run.argv)
                errors = [p for p in judge_argv(facts, argv) if p.severity is Severity.ERROR]
                cases.append((list(argv), not errors))
    return cases


def real_answers(python: Path, argvs: list[list[str]]) -> list[bool]:
    done = subprocess.run(
        [str(python), str(PARSE)], input=json.dumps(argvs), capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    answers: list[bool] = json.loads(done.stdout)
    return answers


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("engine")
    parser.add_argument("--as", dest="version", help="judge by this release of the family")
    args = parser.parse_args()
    root = Path.cwd()
    registry = open_registry(root)
    engine = registry.engines[args.engine]
    facts = (
        build_facts(engine, version=args.version, offline=True)
        if args.version
        else registry.facts[engine.id]
    )
    release = release_of(engine, args.version)
    assert release is not None
    python = environment(release.fetch(offline=True), "vllm", torch=True)
    for name, cases in (
        ("flags, choices, negations", flag_cases(facts)),
        ("profile-scenarios", scenario_cases(root, engine.id, facts)),
    ):
        real = real_answers(python, [argv for argv, _ in cases])
        disagree = [
            (argv, want) for (argv, want), got in zip(cases, real, strict=True) if want != got
        ]
        accepted = sum(real)
        print(
            f"{facts.provenance.version if facts.provenance else '?'} {name}: {len(cases)} cases, "
            f"parser accepts {accepted}, facts agree on {len(cases) - len(disagree)}"
        )
        for argv, want in disagree[:10]:
            print(
                f"  disagree (facts say {'accept' if want else 'refuse'}): {' '.join(argv)[:200]}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
