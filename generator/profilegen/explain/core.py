"""What a profile's container will run: its compose interpolated, its entrypoint run with stubs."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from ..errors import UsageError, suggest
from ..model import Profile
from ..registry import Registry
from ..render import Rendered, RenderError, render_profile
from .interpolate import interpolate_all, referenced_names
from .memo import remembered, run_key
from .sandbox import SHELL_STUBS, Run, run_entrypoint
from .secrets import shown

HELPERS = re.compile(r"^# >>> patch helpers\n.*?^# <<< patch helpers\n", re.M | re.S)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Instead of verifying and applying patch files, the helpers record each step in order.
_RECORDERS = """pg_verify() { printf 'verify\\t%s\\t%s\\t%s\\n' "$1" "$2" "$3" >> {log}; }
pg_diff() { printf 'diff\\t%s\\t%s\\tstrip %s\\n' "$1" "$2" "$3" >> {log}; }
pg_script() { printf 'script\\t%s\\t%s\\t%s\\trequired=%s\\n' "$1" "$2" "$3" "$4" >> {log}; }
"""


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


def known_variables(rendered: Rendered) -> set[str]:
    """Variables the profile's compose reads from the host (its interpolations)."""
    names: set[str] = set()
    for value in _strings(rendered.service):
        names |= referenced_names(value)
    return names


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)] + [
            k for k, v in value.items() if v is None
        ]
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


@lru_cache(maxsize=32)
def _parsed_service(compose: bytes) -> dict[str, Any]:
    doc = YAML(typ="safe").load(compose.decode())
    (service,) = doc["services"].values()
    return dict(service)


def _service(rendered: Rendered) -> dict[str, Any]:
    """The service as written in the compose file (parsed once per rendered file)."""
    return _parsed_service(rendered.compose)


def _container_env(service: dict[str, Any], host: Mapping[str, str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for name, value in (service.get("environment") or {}).items():
        if value is None:
            if name in host:  # a bare entry passes the host's value through, if it has one
                env[name] = host[name]
        else:
            env[name] = str(value)
    return env


def _explain_mode(script: str, engine_binary: str, log: str) -> str:
    """The same script, but patch helpers record instead of acting and the engine is a stub."""
    if not HELPERS.search(script):
        if "pg_verify" in script:
            raise RenderError("the entrypoint has patch steps but no '# >>> patch helpers' block")
        recorded = script
    else:
        recorders = _RECORDERS.replace("{log}", shlex.quote(log))
        recorded = HELPERS.sub(lambda _m: recorders, script, count=1)
    stub = shlex.quote(engine_binary.rsplit("/", 1)[-1])
    launched = re.sub(
        r"^exec\s+" + re.escape(shlex.quote(engine_binary)) + r"(?=\s|$)",
        lambda _m: f"pg_explain_exec {stub}",
        recorded,
        flags=re.M,
    )
    return SHELL_STUBS + launched


def explain(
    registry: Registry, profile: Profile, scenario: Scenario, rendered: Rendered | None = None
) -> Explanation:
    """Runs the profile's container (as rendered, or rendered now) under `scenario`."""
    rendered = rendered or render_profile(registry, profile)
    check_scenario(rendered, scenario)
    host = dict(scenario.env)
    service = interpolate_all(_service(rendered), host)
    engine = registry.engines[profile.engine]
    entry = [str(w) for w in (service.get("entrypoint") or []) + (service.get("command") or [])]

    def argv_for(log: Path) -> list[str]:
        if len(entry) >= 3 and entry[1] == "-c":
            return [*entry[:2], _explain_mode(entry[2], engine.binary, str(log)), *entry[3:]]
        return entry

    gpus = scenario.gpus or registry.rigs[profile.rig].count
    key = run_key(rendered.compose, scenario.env, gpus, scenario.nvlink, engine.binary)
    run = remembered(
        key,
        lambda: run_entrypoint(
            argv_for,
            _container_env(service, host),
            engine=engine.binary.rsplit("/", 1)[-1],
            gpus=gpus,
            nvlink=scenario.nvlink,
        ),
    )
    return _explanation(profile, scenario, gpus, engine.kind, run)


def _explanation(
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
        env=dict(run.env),
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
