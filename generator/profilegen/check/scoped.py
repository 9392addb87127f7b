"""The errors `check` reports on some profiles: what stops them from being written out.

`new` proves a new profile with them before writing it; `render` refuses to write a compose
for a profile `check` rejects. Rules about the generated tree (it is being written) are left
out; every other rule runs, rendering only the profiles asked about.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import Finding
from ..registry import Registry
from .driver import rules_of_kind, run_rules, stops_render
from .rules import CheckContext


def profile_findings(
    registry: Registry, idents: Iterable[str], skip: frozenset[str] = frozenset()
) -> list[Finding]:
    """Findings on these profiles' own files, or on values they inherit."""
    wanted = frozenset(idents)
    files = {registry.where("profiles", ident).file: ident for ident in wanted}
    context = CheckContext(registry, focus=wanted)
    return [
        f
        for f in run_rules(context, skip=rules_of_kind("generated") | skip)
        if f.location.file in files or wanted & set(f.location.inherited_by)
    ]


def blocking(findings: Iterable[Finding]) -> list[Finding]:
    """The errors that stop a render (wording errors such as TODO placeholders do not)."""
    return sorted((f for f in findings if stops_render(f)), key=Finding.sort_key)
