"""The fixed scenario set every profile is explained under (golden tests, `check`)."""

from __future__ import annotations

from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from .core import Scenario, known_variables

ALL = ("vllm", "llama.cpp", "sglang")
SERVERS = ("vllm", "sglang")
# (engines, host environment): the defaults, the drafter switch, an envelope override, NVLink,
# a value a guard refuses, and a malformed draft width.
SCENARIOS: tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], ...] = (
    (ALL, ()),
    (ALL, (("SPEC", "off"),)),
    (ALL, (("SPEC_N", "3"),)),
    (SERVERS, (("MAX_MODEL_LEN", "131072"), ("GPU_MEMORY_UTILIZATION", "0.8"))),
    (("llama.cpp",), (("CTX_SIZE", "65536"),)),
    (SERVERS, (("NVLINK_MODE", "force_on"),)),
    (SERVERS, (("GPU_MEMORY_UTILIZATION", "0.95"),)),
    (ALL, (("SPEC_N", "abc"),)),
)


def scenarios_for(registry: Registry, profile: Profile, rendered: Rendered) -> list[Scenario]:
    """The scenarios that apply: the profile's engine, and only variables its compose reads."""
    kind = registry.engines[profile.engine].kind
    known = known_variables(rendered)
    return [
        Scenario(env)
        for engines, env in SCENARIOS
        if kind in engines and all(name in known for name, _ in env)
    ]
