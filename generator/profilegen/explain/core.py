"""What a profile's container will run: its compose interpolated, its entrypoint run with stubs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..cache import ByIdentity, InMemory
from ..errors import UsageError, suggest
from ..model import Profile
from ..registry import Registry
from ..render import Rendered, parsed_compose, render_profile
from .batch import Batch
from .interpolate import interpolate_all, referenced_names
from .layout import IMAGE_ENV, compose_layout, container_env, entry_argv
from .memo import run_key
from .sandbox import Job, Launch, Mount, Run, stub_path
from .secrets import shown

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Scenario:
    """The host environment Compose interpolates with, and the GPUs the stub reports."""

    env: tuple[tuple[str, str], ...] = ()
    gpus: int | None = None  # None: the profile's rig
    nvlink: bool = False

    @property
    def label(self) -> str:
        parts = [f"{k}={shown(k, v)}" for k, v in self.env] or ["defaults"]
        return " ".join(parts) + (" (NVLink)" if self.nvlink else "")


@dataclass(frozen=True)
class PatchStep:
    action: str  # verify, diff or script
    words: tuple[str, ...]


@dataclass(frozen=True)
class Explanation:
    profile: str
    scenario: Scenario
    gpus: int
    engine: str
    exe: str | None
    argv: tuple[str, ...]
    env: dict[str, str]
    patches: tuple[PatchStep, ...]
    exit_code: int | None
    message: str | None
    deviations: tuple[str, ...] = field(default=())
    # What the entrypoint said while booting (its `profilegen:` lines), in order.
    said: tuple[str, ...] = field(default=())

    @property
    def launched(self) -> bool:
        return self.exe is not None


def known_variables(rendered: Rendered) -> frozenset[str]:
    """Variables the profile's compose reads from the host: its interpolations, and the
    container variables it passes through by name (worked out once per compose file)."""
    known = _KNOWN.get(rendered.compose)
    if known is None:
        names: set[str] = set()
        for value in _strings(rendered.service):
            names |= referenced_names(value)
        environment = rendered.service.get("environment") or {}
        known = frozenset(names | {name for name, value in environment.items() if value is None})
        _KNOWN.put(rendered.compose, known)
    return known


# Compose file -> the variables it reads; a check asks for every scenario of every profile.
_KNOWN: InMemory[bytes, frozenset[str]] = InMemory(4096)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    text = getattr(value, "text", value)
    return [text] if isinstance(text, str) else []


def check_scenario(rendered: Rendered, scenario: Scenario) -> None:
    """Unknown or malformed `-e` variables are usage errors, before anything runs."""
    known = known_variables(rendered)
    for name, value in scenario.env:
        if not ENV_NAME.fullmatch(name):
            raise UsageError(f"-e {name}={value}: {name!r} is not a variable name")
        if "\0" in value:
            raise UsageError(f"-e {name}: a value cannot contain a NUL byte")
        if name not in known:
            close = suggest(name, sorted(known))
            hint = f"did you mean {close}?" if close else "see `profilegen show`"
            raise UsageError(f"-e {name}: {rendered.profile_id} reads no variable {name} ({hint})")


def _service(rendered: Rendered) -> dict[str, Any]:
    """The service as written in the compose file (parsed once per rendered file: a render
    in this process already parsed it to verify it)."""
    (service,) = parsed_compose(rendered.compose)["services"].values()
    return dict(service)


@dataclass(frozen=True)
class Prepared:
    """One scenario of one profile, ready to run: its container's layout and its launch
    (worked out only when the run is not remembered)."""

    profile: Profile
    scenario: Scenario
    gpus: int
    kind: str
    key: str | None
    rendered: Rendered
    binary: str

    @property
    def group(self) -> tuple[str, tuple[Mount, ...]]:
        """Scenarios that see the same container share one job (one mount namespace)."""
        return (self.profile.id, self.job.layout.mounts)

    @cached_property
    def job(self) -> Job:
        host = dict(self.scenario.env)
        service = interpolate_all(_service(self.rendered), host)
        env = tuple(sorted(container_env(service, host).items()))
        launch = Launch(entry_argv(service), env, self.gpus, self.scenario.nvlink)
        return Job(compose_layout(self.rendered, service), (launch,), (stub_path(self.binary),))


def prepare(
    registry: Registry, profile: Profile, scenario: Scenario, rendered: Rendered
) -> Prepared:
    """The container of `rendered` under `scenario`: interpolated as Compose would, laid out."""
    check_scenario(rendered, scenario)
    engine = registry.engines[profile.engine]
    gpus = scenario.gpus or registry.rigs[profile.rig].count
    key = run_key(rendered.files(), scenario.env, gpus, scenario.nvlink, engine.binary)
    return Prepared(profile, scenario, gpus, engine.kind, key, rendered, engine.binary)


def run_prepared(items: Sequence[Prepared]) -> list[Explanation]:
    """Runs what is not remembered, in as few boxes as the batch needs; same order back."""
    batch = Batch()
    batch.add(items)
    return [explanation_of(item, run) for item, run in zip(items, batch.finish(), strict=True)]


def explain(
    registry: Registry, profile: Profile, scenario: Scenario, rendered: Rendered | None = None
) -> Explanation:
    """Runs the profile's container (as rendered, or rendered now) under `scenario`."""
    rendered = rendered or render_profile(registry, profile)
    (result,) = run_prepared([prepare(registry, profile, scenario, rendered)])
    return result


# Explanations this process made, by the (frozen) profile and run they were made from and the
# scenario: a check of a changed registry explains again only the runs that changed.
_EXPLAINED: ByIdentity[Explanation] = ByIdentity(5_000)


def explanation_of(item: Prepared, run: Run) -> Explanation:
    """What `item`'s run says, as an explanation."""
    return _explanation(item.profile, item.scenario, item.gpus, item.kind, run)


def _explanation(
    profile: Profile, scenario: Scenario, gpus: int, kind: str, run: Run
) -> Explanation:
    return _EXPLAINED.get(
        (profile, run),
        lambda: _explain_run(profile, scenario, gpus, kind, run),
        (scenario, gpus, kind),
    )


def _explain_run(
    profile: Profile, scenario: Scenario, gpus: int, kind: str, run: Run
) -> Explanation:
    steps = [PatchStep(w[0], tuple(w[1:])) for w in (ln.split("\t") for ln in run.log) if w]
    said = tuple(
        line.removeprefix("profilegen: ")
        for line in run.stderr.splitlines()
        if line.startswith("profilegen: ")
    )
    message = said[-1] if said else None
    return Explanation(
        profile=profile.id,
        scenario=scenario,
        gpus=gpus,
        engine=kind,
        exe=run.exe,
        argv=run.argv,
        env={k: v for k, v in run.env if IMAGE_ENV.get(k) != v},
        patches=tuple(steps),
        exit_code=None if run.launched else run.exit_code,
        message=None if run.launched else (message or _last_line(run)),
        deviations=tuple(f"{d.what} ({d.reason})" for d in profile.deviations),
        said=said,
    )


def _last_line(run: Run) -> str:
    if run.timed_out:
        return "the entrypoint did not finish in time"
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else f"exited {run.exit_code} without a message"
