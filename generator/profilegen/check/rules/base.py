"""What a rule is: an id, a severity, a summary and a generator of findings over a context."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal, TypeVar, cast

from ...errors import Finding, Location, ProfilegenError, Severity, Value
from ...explain.core import Explanation
from ...explain.scenarios import Explaining
from ...generated.tree import k8s_all, plan_all
from ...lockfile.lock import Lock, LockError, read_lock
from ...registry import Registry
from ...render import Rendered, render_profile_cached
from ...render.targets.k8s import RenderedK8s
from ...render.tunables import EffectiveTunable, effective_tunables
from ..container import container_findings

T = TypeVar("T")
RuleFn = Callable[["CheckContext"], Iterator[Finding]]


# What a rule is about: the registry itself, the generated tree (stale while the registry is
# being fixed, and not a reason for `render` to refuse), or wording (TODO placeholders).
RuleKind = Literal["registry", "generated", "wording"]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    fn: RuleFn
    online: bool = False
    kind: RuleKind = "registry"


RULES: list[Rule] = []


class RunsPending(Exception):
    """A rule read the explain runs before the boxes were done (see `CheckContext.ahead`)."""


def rule(
    rule_id: str,
    summary: str,
    severity: Severity = Severity.ERROR,
    kind: RuleKind = "registry",
) -> Callable[[RuleFn], RuleFn]:
    """Registers a check: its id, severity and kind are its own, and every finding it reports
    (`ctx.report`) carries them; its summary documents it."""

    def register(fn: RuleFn) -> RuleFn:
        def bound(ctx: CheckContext) -> Iterator[Finding]:
            # What it reports carries its identity, however it is called.
            outer, ctx.running = ctx.running, entry
            try:
                yield from fn(ctx)
            finally:
                ctx.running = outer

        entry = Rule(rule_id, severity, summary, bound, kind=kind)
        RULES.append(entry)
        return bound

    return register


def rule_named(rule_id: str) -> Rule:
    """A registered rule by id; an unknown id is a bug in profilegen, never a silent default."""
    for known in RULES:
        if known.id == rule_id:
            return known
    raise ProfilegenError(f"no check rule {rule_id!r} is registered")


@dataclass
class CheckContext:
    registry: Registry
    online: bool = False
    # The rule whose findings `report` makes (set by the driver while it runs each rule).
    running: Rule | None = None
    _shared: dict[Callable[..., object], object] = field(default_factory=dict)
    # The explain runs of what `rendered` rendered (set with it).
    _explaining: Explaining = field(init=False, repr=False)

    def shared(self, make: Callable[[CheckContext], T]) -> T:
        """What several rules read (every profile fitted, say), made once per check by
        `make`, which is also its key: typed, and never a string."""
        if make not in self._shared:
            self._shared[make] = make(self)
        return cast(T, self._shared[make])

    # Rules that render look at these profiles only (`new` proves one profile).
    focus: frozenset[str] | None = None
    # While set, `explained` raises RunsPending rather than wait for the boxes: the driver
    # runs the rules that do not read the runs meanwhile, and the others after.
    ahead: bool = False

    @property
    def root(self) -> Path:
        return self.registry.root

    def report(
        self,
        where: Location | Value,
        message: str,
        hint: str | None = None,
        severity: Severity | None = None,
        follows: Iterable[Value] = (),
    ) -> Finding:
        """A finding of the rule now running (its id and, unless given, its severity).

        At a Value (`ctx.at(profile, "envelope", "tp")`), it is reported at that value's line
        and is about it; `follows` names the values it is a mere consequence of, and the
        finding is left out where one of them is reported (check/derived.py).
        """
        if self.running is None:
            raise ProfilegenError("a finding was reported outside a check rule")
        return self.finding(self.running.id, where, message, hint, severity, follows)

    def finding(
        self,
        rule_id: str,
        where: Location | Value,
        message: str,
        hint: str | None = None,
        severity: Severity | None = None,
        follows: Iterable[Value] = (),
    ) -> Finding:
        """A finding of another rule (one whose id the reporting rule works out)."""
        about = where if isinstance(where, Value) else None
        if isinstance(where, Value):
            where = self.registry.where(where.kind, where.ident, where.node)
        return Finding(
            where,
            message,
            hint,
            rule_id,
            severity or rule_named(rule_id).severity,
            about=about,
            follows=tuple(follows),
        )

    @staticmethod
    def at(profile: str, *node: str | int) -> Value:
        """A value of a profile, to report a finding at (and about)."""
        return Value.of_profile(profile, *node)

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
        """Every profile (or the focused ones) rendered once, shared by the rules that need it.
        As each is rendered, its scenarios start in the boxes (`explained`): they run while
        the rest renders and the rules read it."""
        explaining = Explaining(self.registry)
        rendered: dict[str, Rendered] = {}
        try:
            for profile in self.registry.concrete_profiles():
                if self.focus is None or profile.id in self.focus:
                    rendered[profile.id] = render_profile_cached(self.registry, profile)
                    explaining.add(profile.id, rendered[profile.id])
        except BaseException:
            explaining.cancel()
            raise
        explaining.close()
        self._explaining = explaining
        return rendered

    @cached_property
    def explained(self) -> dict[str, list[Explanation]]:
        """Every rendered profile's container run under the fixed scenarios: the explain
        records, the scenario verdicts and the facts judge read it."""
        self.rendered  # noqa: B018 (renders, and starts the runs)
        if self.ahead and not self._explaining.ready():
            raise RunsPending
        return self._explaining.finish()

    @cached_property
    def container(self) -> dict[str, list[Finding]]:
        """Each rendered profile's reserved variables and mounts (see check/container.py)."""
        return {
            pid: container_findings(self.registry, r, self.tunables[pid])
            for pid, r in self.rendered.items()
        }

    @cached_property
    def tunables(self) -> dict[str, list[EffectiveTunable]]:
        """Each rendered profile's effective tunables (the variables its entrypoint reads)."""
        reg = self.registry
        return {pid: effective_tunables(reg, reg.profiles[pid]) for pid in self.rendered}

    @cached_property
    def k8s(self) -> dict[str, RenderedK8s | ProfilegenError]:
        """Every rendered profile's Kubernetes objects (built, not written), or why not."""
        return k8s_all(self.registry, self.rendered, verify=False, lock=self.usable_lock)

    @cached_property
    def plan(self) -> dict[str, bytes]:
        """A fresh render of the checked-in tree, shared by the disk rules."""
        k8s = self.k8s if self.registry.settings.kubernetes.checked_in else None
        return plan_all(self.registry, self.rendered, k8s, self.explained)
