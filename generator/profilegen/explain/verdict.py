"""Whether a profile's scenarios still explain: each launches or is refused by a guard.

A scenario's outcome is cached by the bytes of the compose file and the scenario, so an
unchanged profile is not run again (`check` on an unchanged registry stays fast).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from ..resources import cache_root
from ..write import write_atomic
from .core import Scenario, explain
from .memo import sources_digest
from .scenarios import scenarios_for

# Bump when the sandbox or the verdict changes, so cached outcomes are not reused.
VERDICT_VERSION = "1"
GUARD_EXIT_CODES = (1, 2)
SANDBOX_REFUSALS = ("the drafter's file ",)


@dataclass(frozen=True)
class Outcome:
    scenario: str
    launched: bool
    exit_code: int | None
    message: str | None

    def problem(self) -> str | None:
        """Why this outcome is wrong, or None."""
        if not self.launched and (self.message or "").startswith(SANDBOX_REFUSALS):
            return None  # a guard that needs the model files, which the sandbox does not have
        if self.scenario == "defaults" and not self.launched:
            return f"does not start with its defaults (exit {self.exit_code}: {self.message})"
        if self.scenario == "SPEC_N=abc" and (self.launched or self.exit_code != 1):
            return "accepts a malformed SPEC_N (the entrypoint must refuse it with exit 1)"
        if not self.launched and self.exit_code not in GUARD_EXIT_CODES:
            return (
                f"[{self.scenario}] the entrypoint failed (exit {self.exit_code}: {self.message})"
            )
        return None


def _path(rendered: Rendered, scenario: Scenario) -> Path:
    digest = hashlib.sha256(sources_digest() + VERDICT_VERSION.encode() + b"\0" + rendered.compose)
    digest.update(repr((scenario.env, scenario.gpus, scenario.nvlink)).encode())
    return cache_root() / "explain" / f"{digest.hexdigest()}.json"


def _cached(path: Path) -> Outcome | None:
    with contextlib.suppress(OSError, ValueError, TypeError):
        return Outcome(**json.loads(path.read_text(encoding="utf-8")))
    return None


def _outcome(
    registry: Registry, profile: Profile, rendered: Rendered, scenario: Scenario
) -> Outcome:
    path = _path(rendered, scenario)
    hit = _cached(path)
    if hit is not None:
        return hit
    result = explain(registry, profile, scenario, rendered)
    outcome = Outcome(scenario.label, result.launched, result.exit_code, result.message)
    with contextlib.suppress(OSError):  # a read-only cache only costs the next run
        write_atomic(path, json.dumps(outcome.__dict__).encode())
    return outcome


def scenario_outcomes(
    registry: Registry, rendered: dict[str, Rendered], workers: int = 4
) -> dict[str, list[Outcome]]:
    """Profile id -> the outcome of each of its scenarios (bash runs in parallel)."""
    jobs = [
        (pid, scenario)
        for pid, r in sorted(rendered.items())
        for scenario in scenarios_for(registry, registry.profiles[pid], r)
    ]
    known = [_cached(_path(rendered[pid], scenario)) for pid, scenario in jobs]
    missing = [job for job, hit in zip(jobs, known, strict=True) if hit is None]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        ran = iter(
            list(
                pool.map(
                    lambda j: _outcome(registry, registry.profiles[j[0]], rendered[j[0]], j[1]),
                    missing,
                )
            )
        )
    out: dict[str, list[Outcome]] = {}
    for (pid, _), hit in zip(jobs, known, strict=True):
        out.setdefault(pid, []).append(hit if hit is not None else next(ran))
    return out
