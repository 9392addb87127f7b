"""Whether a profile's scenarios still explain: each launches or is refused by a guard.

A profile's outcomes are cached by the bytes of its compose file, so an unchanged profile is
not run again (`check` on an unchanged registry stays fast).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass

from ..cache import Store
from ..registry import Registry
from ..render import Rendered
from .memo import sources_digest
from .scenarios import explain_profiles

# Bump when the sandbox or the verdict changes, so cached outcomes are not reused.
VERDICT_VERSION = "3"
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


def _key(rendered: Rendered, kind: str) -> str:
    """What a profile's outcomes depend on: its compose file, its engine kind (which picks the
    scenarios) and the sandbox's code."""
    digest = hashlib.sha256(sources_digest() + VERDICT_VERSION.encode())
    for name, data in sorted(rendered.files().items()):
        digest.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(data).digest())
    digest.update(kind.encode())
    return digest.hexdigest()


def _load(data: bytes | None) -> list[Outcome] | None:
    if data is None:
        return None
    with contextlib.suppress(ValueError, TypeError):
        return [Outcome(**row) for row in json.loads(data)]
    return None


def scenario_outcomes(
    registry: Registry, rendered: dict[str, Rendered]
) -> dict[str, list[Outcome]]:
    """Profile id -> the outcome of each of its scenarios (all run in one batch); a profile
    whose files are unchanged is not run again."""
    store = Store("verdict")
    out: dict[str, list[Outcome]] = {}
    keys: dict[str, str] = {}
    todo: dict[str, Rendered] = {}
    for pid, r in sorted(rendered.items()):
        keys[pid] = _key(r, registry.engines[registry.profiles[pid].engine].kind)
        hit = _load(store.get(keys[pid]))
        if hit is not None:
            out[pid] = hit
        else:
            todo[pid] = r
    fresh = {
        pid: [Outcome(e.scenario.label, e.launched, e.exit_code, e.message) for e in runs]
        for pid, runs in explain_profiles(registry, todo).items()
    }
    for pid, outcomes in fresh.items():
        store.put(keys[pid], json.dumps([o.__dict__ for o in outcomes]).encode())
    return dict(sorted({**out, **fresh}.items()))
