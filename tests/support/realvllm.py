"""Real vLLM servers for the session: representative vLLM profiles, rendered and booted.

One process per test session (started at the session's start, like the llama-server tier of
`realengines`) installs vLLM's CPU build once per machine (`profilegen.releases.vllm_env`),
makes the tiny Qwen3 model once (`tinyqwen`), renders each representative profile's bundle
with the real CLI (`render ID -o DIR`), and boots its container in a box: the bundle's
entrypoint runs unchanged, its `exec vllm serve` finds vLLM's command line at the image's
path, the tiny model sits where the command looks for the weights, and patches apply to a
copy of the real installed package at the image's package folder. What the CPU run changes
is the table in `vllm_cpu` (and `vllm_standins` for remote patch files), recorded with each
boot. The real LiteLLM proxy is put in front of them. State: `realvllm/state.json`.
"""

from __future__ import annotations

import functools
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests.support import enginehost, realengines
from tests.support.enginehost import REPO

FOLDER = "realvllm"
API_KEY = "sk-real-vllm-5e1b"
BOOT_WITHIN = 600.0  # seconds: two boots beside the rest of the suite on two cores
BOX_MIB = 2048  # the box's root (vLLM's shared memory and temporary files live there)


@dataclass(frozen=True)
class VBoot:
    name: str
    profile: str
    tiny: str  # the tiny model's kind (`tinyqwen_make.KINDS`)
    api_key: str | None = None


# The reference profile (patches, a drafter, TP2, hybrid-model settings, an API key) on the
# hybrid tiny model, and one without patches or key (fp8 KV, three served names, an image
# limit, tools, thinking off) on the dense one, each through its own rendered bundle.
BOOTS = (
    VBoot("reference", "qwen38-27b-dual-dflash15-fast", "qwen3-next", api_key=API_KEY),
    VBoot("a3b", "qwen-35b-a3b-dual-nvfp4-fast", "qwen3"),
)


@dataclass
class VEngine:
    boot: VBoot
    url: str
    names: list[str]
    log: str
    bundle: str
    package: str  # the booted copy of the vLLM package (patched), or the environment's
    substitutions: list[str]


def built() -> bool:
    from profilegen.releases.vllm_env import cached_env

    return cached_env() is not None


@functools.cache
def unavailable() -> str | None:
    """Why this machine cannot boot vLLM in a box (None: it can)."""
    return realengines.unavailable()


def scratch_registry(root: Path, ports: dict[str, int], package: Path) -> tuple[Path, Any]:
    """This repository's registry with the boots on the given ports and every remote patch
    they apply replaced by stand-ins; the patch substitutions, by profile."""
    from profilegen.registry.cached import open_registry_cached
    from tests.support.vllm_standins import replace_remote

    shutil.copytree(REPO / "registry", root / "registry")
    for boot in BOOTS:
        path = root / "registry" / "profiles" / f"{boot.profile}.yaml"
        lines = path.read_text().splitlines(keepends=True)
        port = f"port: {ports[boot.name]}\n"
        path.write_text("".join(port if ln.startswith("port: ") else ln for ln in lines))
    registry = open_registry_cached(root)
    replaced: dict[str, list[Any]] = {}
    for boot in BOOTS:
        for patch_id in registry.profiles[boot.profile].patches:
            patch = registry.patches[patch_id]
            if patch.source.kind == "remote":
                replaced.setdefault(boot.name, []).append(replace_remote(root, patch, package))
    return root, replaced


def _render(root: Path, profile: str, bundle: Path) -> None:
    from tests.support.cli import invoke_in

    run = invoke_in(root, "render", profile, "-o", str(bundle), "--offline")
    if run.code != 0:
        raise AssertionError(f"profilegen render {profile} -o: {run.text}")


def _host_env(profile: Any, work: Path, models: Path, subs: list[Any], key: str | None) -> Any:
    from tests.support.vllm_cpu import host_env

    env = {"MODEL_DIR": str(models), "BIND_HOST": "127.0.0.1", **host_env(subs)}
    if key:
        env["API_KEY"] = key
    for name, mount in sorted(profile.mounts.items()):
        if mount.host.startswith("/") and mount.host_env:
            stand_in = work / "host" / name
            stand_in.mkdir(parents=True, exist_ok=True)
            env[mount.host_env] = str(stand_in)
    return env


def _boot(registry: Any, root: Path, boot: VBoot, env: Any, work: Path) -> Any:
    from profilegen.render.context import served_names
    from tests.support import container, vllmbox
    from tests.support.tinyqwen import place, tiny_model
    from tests.support.vllm_cpu import container_env, substitutions

    profile = registry.profiles[boot.profile]
    engine = registry.engines[profile.engine]
    subs = substitutions(profile, boot.tiny)
    model = tiny_model(env, boot.tiny)
    bundle = work / "bundle"
    _render(root, boot.profile, bundle)
    for mount in profile.mounts.values():
        if not mount.host.startswith("/"):
            (bundle / mount.host).mkdir(parents=True, exist_ok=True)
    models = work / "models"
    place(model, models, registry.models[profile.model].artifacts[profile.weights].local_dir)
    service = container.read_service(bundle, _host_env(profile, work, models, subs, boot.api_key))
    package = vllmbox.package_copy(env, work) if profile.patches else env.package_dir
    running = vllmbox.start(
        service, env=env, engine=engine, package=package, work=work, extra=container_env(subs)
    )
    names = served_names(registry, profile)
    lines = [s.line() for s in subs]
    return running, VEngine(boot, running.url, names, str(running.log), str(bundle),
                            str(package), lines)  # fmt: skip


def _proxy(root: Path, work: Path) -> tuple[Any, str]:
    from tests.support.cli import invoke_in
    from tests.support.container import free_port
    from tests.support.litellm import start_proxy

    out = work / "gateway"
    profiles = [b.profile for b in BOOTS]
    run = invoke_in(root, "gateway", *profiles, "--engine-host", "127.0.0.1", "-o", str(out))
    if run.code != 0:
        raise AssertionError(f"profilegen gateway: {run.text}")
    port = free_port()
    return start_proxy(
        out / "config.yaml", port, work, engine_key=API_KEY
    ), f"http://127.0.0.1:{port}"


def _bring_up(here: Path, stop: list[Any]) -> dict[str, Any]:
    """Installs (once per machine), boots every profile and the proxy; what the tests read.
    Whatever starts is added to `stop` at once, so a failure half-way ends it all."""
    from profilegen.registry.cached import open_registry_cached
    from profilegen.releases.vllm_env import ensure_env
    from tests.support import container, vllmbox
    from tests.support.litellm import wait_proxy

    begun, times = time.monotonic(), {}
    env = ensure_env(progress=lambda m: print(m, flush=True))
    ports = {boot.name: container.free_port() for boot in BOOTS}
    root, replaced = scratch_registry(here / "root", ports, env.package_dir)
    registry = open_registry_cached(root)
    times["prepared"] = time.monotonic() - begun
    engines, boxes = [], []
    for boot in BOOTS:
        running, engine = _boot(registry, root, boot, env, here / boot.name)
        stop.append(running)
        boxes.append(running)
        engine.substitutions += [s.line() for s in replaced.get(boot.name, [])]
        engines.append(engine)
    proxy, proxy_url = _proxy(root, here / "proxy")
    stop.append(proxy)
    for running in boxes:
        container.wait_healthy(running, BOOT_WITHIN)
    times["engines"] = time.monotonic() - begun
    wait_proxy(proxy, proxy_url, here / "proxy" / "proxy.log")
    times["proxy"] = time.monotonic() - begun
    return {
        "engines": {e.boot.name: asdict(e) for e in engines},
        "proxy": proxy_url,
        "proxy_log": str(here / "proxy" / "proxy.log"),
        "root": str(root),
        "env": {
            **env.info,
            "python": str(env.python),
            "folder": str(env.folder),
            "modelinfos": str(vllmbox.modelinfos(env)),
        },  # fmt: skip
        "seconds": {k: round(v, 1) for k, v in times.items()},
    }


def serve(shared: Path) -> None:
    """The host process of the vLLM tier."""
    enginehost.host(shared, FOLDER, _bring_up)


def start(shared: Path) -> None:
    enginehost.start(shared, FOLDER, __name__)


def stop(shared: Path) -> None:
    enginehost.stop(shared, FOLDER)


def wait(shared: Path, timeout: float) -> dict[str, Any]:
    return enginehost.wait(shared, timeout, FOLDER, __name__)


def report(shared: Path) -> list[str]:
    """The test output's lines: what each real-vLLM boot changed from its profile's rig (the
    table in `vllm_cpu`), and how long the tier took. None where the tier did not boot."""
    import json

    try:
        state = json.loads((shared / FOLDER / enginehost.STATE).read_text())
    except (OSError, ValueError):
        return []
    env = state["env"]
    lines = [f"{env['dist']} ({env['vllm']}, torch {env['torch']}) from {env['folder']}"]
    for name, engine in state["engines"].items():
        lines.append(f"{name}: {engine['boot']['profile']}, at {engine['url']}")
        lines += [f"  {line}" for line in engine["substitutions"]]
    lines.append(f"up after (s): {state['seconds']}")
    return lines
