"""What a rule is: an id, a severity, a summary and a generator of findings over a context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ...errors import Finding, Location, ProfilegenError, Severity
from ...generated.tree import k8s_all, plan_all, render_all
from ...hub.lock import Lock, LockError, read_lock
from ...registry import Registry
from ...render import Rendered
from ...render.targets.k8s import RenderedK8s
from ..container import container_findings

RuleFn = Callable[["CheckContext"], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    fn: RuleFn
    online: bool = False


RULES: list[Rule] = []


def rule(
    rule_id: str, summary: str, severity: Severity = Severity.ERROR
) -> Callable[[RuleFn], RuleFn]:
    """Registers a check; its findings carry its id, and its summary documents it."""

    def register(fn: RuleFn) -> RuleFn:
        RULES.append(Rule(rule_id, severity, summary, fn))
        return fn

    return register


@dataclass
class CheckContext:
    registry: Registry
    online: bool = False
    cache: dict[str, object] = field(default_factory=dict)
    # Rules that render look at these profiles only (`new` proves one profile).
    focus: frozenset[str] | None = None

    @property
    def root(self) -> Path:
        return self.registry.root

    def finding(
        self,
        rule_id: str,
        where: Location,
        message: str,
        hint: str | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        default = next((r.severity for r in RULES if r.id == rule_id), Severity.ERROR)
        return Finding(where, message, hint, rule_id, severity or default)

    @cached_property
    def lock(self) -> Lock | LockError | None:
        """The lock file, read once per check (None: there is none; LockError: it cannot be
        used, which the lock rule reports), shared by the lock and fit rules."""
        try:
            return read_lock(self.root)
        except LockError as exc:
            return exc

    @property
    def usable_lock(self) -> Lock | None:
        """The lock when it can be used; fit falls back to the declared sizes otherwise."""
        return self.lock if isinstance(self.lock, Lock) else None

    @cached_property
    def rendered(self) -> dict[str, Rendered]:
        """Every profile (or the focused ones) rendered once, shared by the rules that need it."""
        return render_all(self.registry, self.focus)

    @cached_property
    def container(self) -> dict[str, list[Finding]]:
        """Each rendered profile's reserved variables and mounts (see check/container.py)."""
        return {pid: container_findings(self.registry, r) for pid, r in self.rendered.items()}

    @cached_property
    def k8s(self) -> dict[str, RenderedK8s | ProfilegenError]:
        """Every rendered profile's Kubernetes objects (built, not written), or why not."""
        return k8s_all(self.registry, self.rendered, verify=False, lock=self.usable_lock)

    @cached_property
    def plan(self) -> dict[str, bytes]:
        """A fresh render of the checked-in tree, shared by the disk rules."""
        k8s = self.k8s if self.registry.settings.kubernetes.checked_in else None
        return plan_all(self.registry, self.rendered, k8s)
