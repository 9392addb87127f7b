"""The fixed scenario set every profile is explained under (golden tests, `check`)."""

from __future__ import annotations

from collections.abc import Mapping

from ..model import Profile
from ..registry import Registry
from ..render import Rendered
from .batch import LEAST_LAUNCHES, Batch
from .core import Explanation, Prepared, Scenario, explanation_of, known_variables, prepare

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
    return [item for pid, r in sorted(rendered.items()) for item in _prepare(registry, pid, r)]


def _prepare(registry: Registry, profile_id: str, rendered: Rendered) -> list[Prepared]:
    profile = registry.profiles[profile_id]
    return [
        prepare(registry, profile, scenario, rendered)
        for scenario in scenarios_for(registry, profile, rendered)
    ]


class Explaining:
    """Profiles explained as they are rendered: each one's scenarios go to the boxes when
    it is added, and `finish` gives every profile's explanations (as `explain_profiles`)."""

    def __init__(self, registry: Registry, least: int = LEAST_LAUNCHES) -> None:
        self._registry = registry
        self._items: list[Prepared] = []
        self._profiles: list[str] = []
        self._batch = Batch(least=least)

    @property
    def started(self) -> int:
        """The boxes sent so far."""
        return self._batch.started

    def add(self, profile_id: str, rendered: Rendered) -> None:
        items = _prepare(self._registry, profile_id, rendered)
        self._profiles.append(profile_id)
        self._items.extend(items)
        self._batch.add(items)

    def finish(self) -> dict[str, list[Explanation]]:
        """Profile id -> its scenarios explained, in the order `scenarios_for` gives them."""
        out: dict[str, list[Explanation]] = {pid: [] for pid in sorted(self._profiles)}
        for item, run in zip(self._items, self._batch.finish(), strict=True):
            out[item.profile.id].append(explanation_of(item, run))
        return out

    def close(self) -> None:
        """No more profiles: the runs still waiting start now."""
        self._batch.close()

    def ready(self) -> bool:
        return self._batch.ready()

    def cancel(self) -> None:
        self._batch.cancel()


def explain_profiles(
    registry: Registry, rendered: Mapping[str, Rendered]
) -> dict[str, list[Explanation]]:
    """Profile id -> its scenarios explained, in the order `scenarios_for` gives them: all of
    them run in one batch (and a run the result cache holds is not run again)."""
    explaining = Explaining(registry)
    for profile_id, result in sorted(rendered.items()):
        explaining.add(profile_id, result)
    return explaining.finish()
