"""Every profile's container, run under the fixed scenarios, launches or is refused by a guard."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...errors import Finding, Value
from ...explain.verdict import Outcome, outcomes
from ...model import Profile
from .base import CheckContext, rule

# The entrypoint's guards name the variable they refuse first (`KV_CACHE_DTYPE must be one
# of: …`, `TP=3 needs 3 GPUs, …`).
GUARDED = re.compile(r"([A-Z][A-Z0-9_]*)(=| must | exceeds )")


@rule(
    "explain-scenarios",
    "each profile's entrypoint, run with stub engines under the golden scenarios, starts the "
    "engine or refuses through a guard (never crashes)",
)
def explain_scenarios(ctx: CheckContext) -> Iterator[Finding]:
    # A profile whose container is already wrong (a reserved variable, a mount over the
    # entrypoint) is reported there once, not again for every scenario it breaks.
    sound = sorted(pid for pid in ctx.rendered if not ctx.container[pid])
    for profile_id in sound:
        results = outcomes(ctx.explained[profile_id])
        profile = ctx.registry.profiles[profile_id]
        fields = _fields(ctx, profile)
        for outcome in results:
            problem = outcome.problem()
            if problem:
                yield ctx.report(
                    ctx.registry.where("profiles", profile_id, ("id",)),
                    f"{profile_id}: {problem}",
                    f"see `profilegen explain {profile_id}`",
                    follows=_follows(ctx, profile, outcome, fields),
                )


def _fields(ctx: CheckContext, profile: Profile) -> dict[str, tuple[str, ...]]:
    """Each tunable variable of the profile -> the value it defaults to (`envelope.tp`)."""
    return {
        t.env: tuple(t.field.removeprefix("profile.").split("."))
        for t in ctx.tunables[profile.id]
        if t.field and t.field.startswith("profile.")
    }


def _follows(
    ctx: CheckContext, profile: Profile, outcome: Outcome, fields: dict[str, tuple[str, ...]]
) -> list[Value]:
    """The profile values a refusal follows from: the one whose variable a guard refused at
    its default, and the TP where the rig has fewer cards (the GPU guard refuses every
    scenario there)."""
    out = []
    match = GUARDED.match(outcome.message or "")
    if match and match.group(1) in fields:
        out.append(ctx.at(profile.id, *fields[match.group(1)]))
    rig = ctx.registry.rigs.get(profile.rig)
    if rig is not None and profile.envelope.tp > rig.count:
        out.append(ctx.at(profile.id, "envelope", "tp"))
    return out
