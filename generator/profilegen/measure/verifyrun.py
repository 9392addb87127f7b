"""`verify --serving`: every functional check in order, and the run as an evidence record
(method `verify`: the count of checks passed, the soak's verdict, the context filled)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..hub.serving import EngineUnreachable, redact_url
from ..registry import Registry
from .functional import (
    FAIL,
    INFO,
    PASS,
    SKIP,
    Check,
    Target,
    check_chat,
    check_streaming,
    check_thinking,
)
from .identity import Identity, shown_name
from .machine import Machine
from .probes import Soak, long_context, soak
from .record import evidence_entry
from .toolcall import check_tool_call

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    context: int | None  # the long-context probe's length (None: sized to the server's)
    recall: bool  # whether recall is judged (else reported as info)
    soak: Soak


@dataclass
class VerifyResult:
    plan: Plan
    checks: list[Check] = field(default_factory=list)
    filled: int | None = None  # prompt tokens the long-context probe filled

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    @property
    def judged(self) -> list[Check]:
        return [c for c in self.checks if c.status in (PASS, FAIL)]

    def tally(self) -> str:
        passed = sum(c.status == PASS for c in self.judged)
        return f"{passed}/{len(self.judged)}"


def run_checks(target: Target, identity: Identity, plan: Plan, say: Progress) -> VerifyResult:
    """Every check in order; a server that stops answering fails the check it was in (and
    the ones after, each on its own line), never the run."""
    result = VerifyResult(plan)
    result.checks.append(Check("identity", PASS, "; ".join(identity.notes) or
                               f"serves {', '.join(map(shown_name, identity.server.names))}"))  # fmt: skip
    for name, run in SHORT:
        result.checks.append(_guarded(name, partial(_one, run, target), say)[0])
    say(f"long context: a prompt of {plan.context or 'about 90% of the context in'} tokens")
    longer = _guarded("long-context", lambda: _long(target, plan, result), say)
    result.checks += longer
    say(f"soak: {plan.soak.describe()}, within {plan.soak.seconds:g} s")
    result.checks += _guarded("soak", lambda: [soak(target, plan.soak)], say)
    return result


SHORT: tuple[tuple[str, Callable[[Target], Check]], ...] = (
    ("chat", check_chat),
    ("tool-call", check_tool_call),
    ("streaming", check_streaming),
    ("thinking", check_thinking),
)


def _one(run: Callable[[Target], Check], target: Target) -> list[Check]:
    return [run(target)]


def _long(target: Target, plan: Plan, result: VerifyResult) -> list[Check]:
    longer = long_context(target, plan.context, plan.recall)
    result.filled = longer.filled
    return longer.checks


def _guarded(name: str, run: Callable[[], list[Check]], say: Progress) -> list[Check]:
    try:
        checks = run()
    except EngineUnreachable as exc:
        checks = [Check(name, FAIL, str(exc))]
    for check in checks:
        say(f"{check.name}: {check.status}")
    return checks


def as_json(result: VerifyResult, name: str, url: str) -> dict[str, Any]:
    return {
        "profile": name,
        "url": url,
        "ok": result.ok,
        "passed": result.tally(),
        "checks": [c.__dict__ for c in result.checks],
        "context_filled": result.filled,
    }


def run_digest(result: VerifyResult, url: str) -> str:
    text = json.dumps([redact_url(url), [c.__dict__ for c in result.checks]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def verify_record(
    registry: Registry, identity: Identity, result: VerifyResult, url: str,
    machine: Machine | None, *, rig: str, by: str | None,
) -> dict[str, Any]:  # fmt: skip
    """The evidence record of a verify run: which checks passed, failed or were not judged."""
    url = redact_url(url)  # a credential is never stored
    source = (
        f"profilegen verify --serving {url}: {len(result.checks)} checks, soak "
        f"{result.plan.soak.describe()}; run sha256 {run_digest(result, url)}"
    )
    figures: dict[str, Any] = {"verify_full": result.tally()}
    soaked = [c for c in result.checks if c.name == "soak"]
    if soaked:
        figures["soak"] = "pass" if soaked[0].status == PASS else "fail"
    if result.filled:
        figures["max_context_filled"] = result.filled
    return evidence_entry(registry, identity, machine, method="verify", rig=rig, by=by,
                          source=source, summary=_summary(identity, result)[:500],
                          figures=figures)  # fmt: skip


def _summary(identity: Identity, result: VerifyResult) -> str:
    parts = [f"served as {identity.model}", f"{result.tally()} checks passed"]
    for c in result.checks:
        if c.status == FAIL:
            parts.append(f"{c.name} failed")
        elif c.status in (SKIP, INFO):
            parts.append(f"{c.name} not judged")
    return "; ".join(parts)
