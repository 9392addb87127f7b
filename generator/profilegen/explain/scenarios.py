"""The fixed scenario set every profile is explained under (golden tests, `check`)."""

from __future__ import annotations

from collections.abc import Mapping

from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from .core import Explanation, Prepared, Scenario, known_variables, prepare, run_prepared

# The host environments: the defaults, the drafter switch, an envelope override, NVLink, a
# value a guard refuses, and a malformed draft width. Each applies to the profiles whose
# compose reads all of its variables (llama.cpp takes CTX_SIZE where servers take
# MAX_MODEL_LEN), whatever the engine.
SCENARIOS: tuple[tuple[tuple[str, str], ...], ...] = (
    (),
    (("SPEC", "off"),),
    (("SPEC_N", "3"),),
    (("MAX_MODEL_LEN", "131072"), ("GPU_MEMORY_UTILIZATION", "0.8")),
    (("CTX_SIZE", "65536"),),
    (("NVLINK_MODE", "force_on"),),
    (("GPU_MEMORY_UTILIZATION", "0.95"),),
    (("SPEC_N", "abc"),),
)


def scenarios_for(registry: Registry, profile: Profile, rendered: Rendered) -> list[Scenario]:
    """The scenarios that apply: only those whose variables the profile's compose reads."""
    known = known_variables(rendered)
    return [Scenario(env) for env in SCENARIOS if all(name in known for name, _ in env)]


def prepare_profiles(registry: Registry, rendered: Mapping[str, Rendered]) -> list[Prepared]:
    """Every scenario of every rendered profile, ready to run, in profile order."""
    return [
        prepare(registry, registry.profiles[pid], scenario, r)
        for pid, r in sorted(rendered.items())
        for scenario in scenarios_for(registry, registry.profiles[pid], r)
    ]


def explain_profiles(
    registry: Registry, rendered: Mapping[str, Rendered]
) -> dict[str, list[Explanation]]:
    """Profile id -> its scenarios explained, in the order `scenarios_for` gives them: all of
    them run in one batch (and a run the result cache holds is not run again)."""
    todo = prepare_profiles(registry, rendered)
    out: dict[str, list[Explanation]] = {pid: [] for pid in sorted(rendered)}
    for explanation in run_prepared(todo):
        out[explanation.profile].append(explanation)
    return out
