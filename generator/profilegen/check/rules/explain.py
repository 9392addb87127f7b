"""Every profile's container, run under the fixed scenarios, launches or is refused by a guard."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding
from ...explain.verdict import scenario_outcomes
from .base import CheckContext, rule


@rule(
    "explain-scenarios",
    "each profile's entrypoint, run with stub engines under the golden scenarios, starts the "
    "engine or refuses through a guard (never crashes)",
)
def explain_scenarios(ctx: CheckContext) -> Iterator[Finding]:
    # A profile whose container is already wrong (a reserved variable, a mount over the
    # entrypoint) is reported there once, not again for every scenario it breaks.
    sound = {pid: r for pid, r in ctx.rendered.items() if not ctx.container[pid]}
    outcomes = scenario_outcomes(ctx.registry, sound)
    for profile_id, results in outcomes.items():
        profile = ctx.registry.profiles[profile_id]
        rig = ctx.registry.rigs.get(profile.rig)
        if rig is not None and profile.envelope.tp > rig.count:
            continue  # its GPU guard refuses on its own rig: the hw-tp finding says why, once
        for outcome in results:
            problem = outcome.problem()
            if problem:
                yield ctx.report(
                    ctx.registry.where("profiles", profile_id, ("id",)),
                    f"{profile_id}: {problem}",
                    f"see `profilegen explain {profile_id}`",
                )
