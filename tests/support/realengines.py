"""Real llama-server engines for the session: representative profiles, rendered and booted.

One process per test session (started by the session's configuration, or by the first test
that asks) builds llama-server once per machine (`profilegen.releases.llamacpp_build`),
takes a tiny GGUF (written once per machine, kept beside the build), renders each
representative profile into a bundle (`render -o`), boots its container in a box with the
real engine at the image's path and the tiny model in the mounted model folder, puts the real
LiteLLM proxy in front of them all, and records where each listens in
`realengines/state.json`. It ends with the session, or on its own once the session's process
is gone (a killed run leaves no engines behind).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.support import enginehost
from tests.support.enginehost import REPO

FOLDER = "realengines"
ENGINE = "llama.cpp-b10236"
VOCAB = "llama-spm"
API_KEY = "sk-real-engine-7c4d"
BOOT_WITHIN = 120.0
RELAY_PYTHON = "/usr/bin/python3"
# What the boxes add to each container's environment. llama-server logs its model, KV and
# compute buffers at verbosity 4 only: what fit reads. The build's OpenMP threads sleep while
# they wait for work instead of spinning (GNU OpenMP spins by default): on two cores shared
# with the rest of the suite, a thread spinning at a barrier for one that is not scheduled
# burnt ~7 s of CPU per run in the engine the verify tests talk to (1.5 s passive).
ENGINE_ENV = {"LLAMA_ARG_LOG_VERBOSITY": "4", "OMP_WAIT_POLICY": "passive"}
# The representative boots: the --alias style with an API key, the weights-path style, and a
# chat template delivered as a patch file (with a gateway-only alias).
TEMPLATE_PATCH = "tiny-chat-template"
TEMPLATE_PROFILE = "tiny-template-single"
TEMPLATE_MOUNT = "/etc/profilegen-tiny-chat-template.jinja"
# A ChatML template that says where it came from: /props returns it as the engine loaded it.
TEMPLATE = (
    "{#- profilegen test template -#}\n"
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor -%}\n"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif -%}\n"
)


@dataclass(frozen=True)
class Boot:
    name: str
    profile: str
    api_key: str | None = None
    extra: dict[str, str] = field(default_factory=dict)  # host variables Compose reads
    # Behind the gateway: a profile without served names is not (it answers to a file path).
    gateway: bool = True


BOOTS = (
    Boot("alias-key", "llamacpp-vibethinker-3b-single", api_key=API_KEY),
    Boot("path", "llamacpp-gemma-12b-single-q8kxl", gateway=False),
    Boot("template", TEMPLATE_PROFILE),
)


@dataclass
class Engine:
    boot: Boot
    url: str
    port: int
    names: list[str]
    log: str
    bundle: str


def folder_of(shared: Path) -> Path:
    return shared / FOLDER


def built() -> bool:
    """Whether this machine's build of the engine is already in the build cache."""
    from profilegen.releases.llamacpp_build import cached_server, engine_build

    return cached_server(engine_build(ENGINE)) is not None


@functools.cache
def unavailable() -> str | None:
    """Why this machine cannot run the containers (None: it can)."""
    from profilegen import sandbox

    if not Path(RELAY_PYTHON).is_file():
        return f"the boxes' port relay needs {RELAY_PYTHON}"
    reason = sandbox.available()
    return None if reason is None else f"cannot isolate a container here: {reason}"


# --------------------------------------------------------------------- the scratch registry


def _vendored(patch_id: str, name: str, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    return (
        "# yaml-language-server: $schema=../../schema/patch.schema.json\n"
        f"id: {patch_id}\n"
        'title: "a chat template for the real-engine tests"\n'
        f"engine: {ENGINE}\n"
        f'mount_file: "{TEMPLATE_MOUNT}"\n'
        "source:\n  kind: vendored\n  files:\n"
        f"    - {{path: {name}, size: {len(data)}, sha256: {digest}}}\n"
        'capability: "serves the tests\' own chat template"\n'
        'drop_when: "never: a test fixture"\n'
    )


TINY_MODEL = "tiny-llama"
TINY_PROFILE = "tiny-llama-single"


def _tiny_model(tiny: Any, vocab: int, size: int) -> str:
    """The tiny model as the registry states a model: its facts, for fit."""
    return (
        "# yaml-language-server: $schema=../../schema/model.schema.json\n"
        f"id: {TINY_MODEL}\n"
        'name: "the real-engine tests\' tiny llama"\n'
        "family: dense\n"
        f"served_name: {TINY_MODEL}\n"
        "architecture:\n"
        f"  num_layers: {tiny.layers}\n"
        f"  full_attention_layers: {tiny.layers}\n"
        f"  hidden_size: {tiny.hidden}\n"
        f"  num_attention_heads: {tiny.heads}\n"
        f"  num_kv_heads: {tiny.kv_heads}\n"
        f"  head_dim: {tiny.head_dim}\n"
        f"  intermediate_size: {tiny.ffn}\n"
        f"  vocab_size: {vocab}\n"
        f"  max_position_embeddings: {tiny.context}\n"
        "artifacts:\n"
        "  f16:\n"
        '    repo: "profilegen/tiny-llama"\n'
        "    files: [tiny.gguf]\n"
        f"    size: {{value: {size}, unit: B}}\n"
        "    format: gguf\n"
        "    local_dir: tiny-llama\n"
    )


def scratch_registry(root: Path, ports: dict[str, int], tiny: Path) -> Path:
    """This repository's registry, plus the chat-template profile, on the given ports, and
    the tiny model with a profile of it (the vibethinker one's settings) for fit."""
    from tests.support.tinygguf import TinyLlama, tiny_vocab

    shutil.copytree(REPO / "registry", root / "registry")
    patches = root / "registry" / "patches"
    (patches / "files" / TEMPLATE_PATCH).mkdir(parents=True)
    (patches / "files" / TEMPLATE_PATCH / "template.jinja").write_text(TEMPLATE)
    (patches / f"{TEMPLATE_PATCH}.yaml").write_text(
        _vendored(TEMPLATE_PATCH, "template.jinja", TEMPLATE.encode())
    )
    (root / "registry" / "profiles" / f"{TEMPLATE_PROFILE}.yaml").write_text(
        "# yaml-language-server: $schema=../../schema/profile.schema.json\n"
        f"id: {TEMPLATE_PROFILE}\n"
        "extends: llamacpp-vibethinker-3b-single\n"
        'title: "VibeThinker-3B with a chat template delivered as a patch file"\n'
        "status: experimental\n"
        f"patches: [{TEMPLATE_PATCH}]\n"
        "port: 8001\n"
        "serve:\n"
        "  served_names: [vibethinker-templated]\n"
        "  gateway_aliases: [templated-alias]\n"
        f'  chat_template: "{TEMPLATE_MOUNT}"\n'
    )
    (root / "registry" / "models" / f"{TINY_MODEL}.yaml").write_text(
        _tiny_model(TinyLlama(), tiny_vocab(tiny), tiny.stat().st_size)
    )
    (root / "registry" / "profiles" / f"{TINY_PROFILE}.yaml").write_text(
        "# yaml-language-server: $schema=../../schema/profile.schema.json\n"
        f"id: {TINY_PROFILE}\n"
        "extends: llamacpp-vibethinker-3b-single\n"
        'title: "the tiny llama at the vibethinker profile\'s settings"\n'
        "status: experimental\n"
        f"model: {TINY_MODEL}\n"
        "weights: f16\n"
        "port: 8002\n"
        "serve:\n"
        f"  served_names: [{TINY_MODEL}]\n"
    )
    for boot in BOOTS:
        path = root / "registry" / "profiles" / f"{boot.profile}.yaml"
        lines = path.read_text().splitlines(keepends=True)
        text = "".join(
            f"port: {ports[boot.name]}\n" if line.startswith("port: ") else line for line in lines
        )
        path.write_text(text)
    return root


# --------------------------------------------------------------------------- booting


def _models(work: Path, model_path: str, tiny: Path) -> Path:
    """A model folder holding the tiny GGUF where the profile's command looks for its weights."""
    models = work / "models"
    place = models / model_path.removeprefix("/models/")
    place.parent.mkdir(parents=True, exist_ok=True)
    os.link(tiny, place)
    return models


def kept_tiny_llama(vocab: Path) -> Path:
    """The tiny GGUF of `tinygguf` with the tokenizer of `vocab`, written once per machine (a
    second of CPU) and kept in the build cache, named by a digest of what makes it: the
    writer's source, the vocabulary, the gguf and numpy releases."""
    from importlib.metadata import version

    from profilegen.releases.llamacpp_build import build_cache_root

    writer = Path(__file__).with_name("tinygguf.py")
    made_of = [writer.read_bytes(), vocab.read_bytes(), version("gguf").encode()]
    key = hashlib.sha256(b"\0".join([*made_of, version("numpy").encode()])).hexdigest()[:16]
    kept = build_cache_root() / "tiny-models" / f"llama-{key}.gguf"
    if not kept.is_file():
        from tests.support.tinygguf import write_tiny_llama

        kept.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".llama-{key}.", dir=kept.parent))
        try:
            write_tiny_llama(staging / "tiny.gguf", vocab)
            (staging / "tiny.gguf").replace(kept)  # whole, or not there
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return kept


def _boot(registry: Any, boot: Boot, server: Any, tiny: Path, port: int, work: Path) -> Any:
    from profilegen.render import render_profile
    from profilegen.render.bundle import bundle_files, write_bundle
    from profilegen.render.context import served_names
    from tests.support import container

    profile = registry.profiles[boot.profile]
    engine = registry.engines[profile.engine]
    bundle = work / "bundle"
    write_bundle(bundle, bundle_files(registry, profile, render_profile(registry, profile)))
    weights = registry.models[profile.model].artifacts[profile.weights]
    model_path = f"{engine.model_mount}/{weights.local_dir}/{weights.files[0]}"
    host_env = {
        "MODEL_DIR": str(_models(work, model_path, tiny)),
        "BIND_HOST": "127.0.0.1",
        **({"API_KEY": boot.api_key} if boot.api_key else {}),
        **boot.extra,
    }
    service = container.read_service(bundle, host_env)
    assert service.port == port, (service.port, port)
    running = container.start(
        service, engine=server.binary, engine_path=engine.binary, work=work, extra_env=ENGINE_ENV
    )
    names = served_names(registry, profile)
    return running, Engine(boot, running.url, port, names, str(running.log), str(bundle))


def _proxy(root: Path, work: Path, engines: list[Engine]) -> tuple[subprocess.Popen[bytes], str]:
    from tests.support.cli import invoke_in
    from tests.support.container import free_port
    from tests.support.litellm import start_proxy

    out = work / "gateway"
    profiles = [e.boot.profile for e in engines if e.boot.gateway]
    run = invoke_in(root, "gateway", *profiles, "--engine-host", "127.0.0.1", "-o", str(out))
    if run.code != 0:
        raise AssertionError(f"profilegen gateway: {run.text}")
    port = free_port()
    proc = start_proxy(out / "config.yaml", port, work, engine_key=API_KEY)
    return proc, f"http://127.0.0.1:{port}"


def _bring_up(here: Path, stop: list[Any]) -> dict[str, Any]:
    """Builds (once per machine), boots every engine and the proxy; what the tests read.
    Whatever starts is added to `stop` at once, so a failure half-way ends it all."""
    from profilegen.registry.cached import open_registry_cached
    from profilegen.releases.llamacpp_build import engine_build, ensure_server
    from tests.support import container
    from tests.support.litellm import wait_proxy

    begun, times = time.monotonic(), {}
    server = ensure_server(engine_build(ENGINE), progress=lambda m: print(m, flush=True))
    tiny = here / "tiny.gguf"
    shutil.copyfile(kept_tiny_llama(server.vocab(VOCAB)), tiny)
    ports = {boot.name: container.free_port() for boot in BOOTS}
    root = scratch_registry(here / "root", ports, tiny)
    registry = open_registry_cached(root)
    times["prepared"] = time.monotonic() - begun
    engines = []
    for boot in BOOTS:
        running, engine = _boot(registry, boot, server, tiny, ports[boot.name], here / boot.name)
        stop.append(running)
        engines.append(engine)
    # The proxy starts (seconds of imports) while the engines load.
    proxy, proxy_url = _proxy(root, here / "proxy", engines)
    stop.append(proxy)
    for running in stop[:-1]:
        container.wait_healthy(running, BOOT_WITHIN)
    times["engines"] = time.monotonic() - begun
    wait_proxy(proxy, proxy_url, here / "proxy" / "proxy.log")
    times["proxy"] = time.monotonic() - begun
    return {
        "engines": {e.boot.name: asdict(e) for e in engines},
        "proxy": proxy_url,
        "proxy_log": str(here / "proxy" / "proxy.log"),
        "root": str(root),
        "server": {"binary": str(server.binary), **server.info},
        "tiny": str(tiny),
        "seconds": {k: round(v, 1) for k, v in times.items()},
    }


def serve(shared: Path) -> None:
    """The host process: boots everything, records the state, waits to be ended."""
    enginehost.host(shared, FOLDER, _bring_up)


# ----------------------------------------------------------------- starting and waiting


def start(shared: Path) -> None:
    """Starts the host process once per session (whoever asks first); returns at once."""
    enginehost.start(shared, FOLDER, __name__)


def stop(shared: Path) -> None:
    """Ends the host process and everything it started (the session's end)."""
    enginehost.stop(shared, FOLDER)


def wait(shared: Path, timeout: float) -> dict[str, Any]:
    """The state once every engine and the proxy answer; a failure is raised with its reason."""
    return enginehost.wait(shared, timeout, FOLDER, __name__)
