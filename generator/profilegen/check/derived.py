"""One mistake, one finding: a finding that merely follows from a value another finding
already reports is left out.

A rule says what a finding is about (`Finding.about`, the value at its file and line) and,
where its finding is a consequence of other values, which ones (`Finding.follows`): a
Kubernetes layout that does not split follows `envelope.tp`, a KV pool fit follows the
envelope it is computed from. Once the value is reported, the consequence says nothing the
report does not already say, and fixing the value makes it go (or show again, as itself).

A finding is only ever left out for one at least as severe, so the exit status never changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import Finding, Severity, Value


def _covers(reported: Finding, derived: Finding) -> bool:
    about = reported.about
    if about is None or reported is derived:
        return False
    if derived.severity is Severity.ERROR and reported.severity is not Severity.ERROR:
        return False  # a warning never hides an error
    return any(about.overlaps(value) for value in derived.follows)


def drop_derived(findings: Sequence[Finding]) -> list[Finding]:
    """The findings less those that follow from a value a kept finding reports.

    A finding is left out only for one that stays, so findings that follow each other's
    values never all go: one of them reports the mistake.
    """
    about: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        if finding.about is not None:
            about.setdefault(_entity(finding.about), []).append(finding)
    dropped: set[int] = set()
    for finding in findings:
        candidates = [
            other
            for value in finding.follows
            for other in about.get(_entity(value), ())
            if id(other) not in dropped
        ]
        if any(_covers(other, finding) for other in candidates):
            dropped.add(id(finding))
    return [f for f in findings if id(f) not in dropped]


def _entity(value: Value) -> tuple[str, str]:
    return value.kind, value.ident
