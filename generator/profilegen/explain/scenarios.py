"""The fixed scenario set every profile is explained under (golden tests, `check`)."""

from __future__ import annotations

from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from .core import Scenario, known_variables

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
