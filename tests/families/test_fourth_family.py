"""A new engine family lands in one module plus its template: it renders, explains and checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from profilegen.explain.core import Scenario, explain
from profilegen.families import family
from profilegen.registry import open_registry
from profilegen.render import render_profile
from tests.support.base import build_base
from tests.support.cli import invoke_in

from .tinyserve import TEMPLATE, registered

ENGINE = """# yaml-language-server: $schema=../../schema/engine.schema.json
id: tinyserve-1.0
kind: tinyserve
name: TinyServe 1.0
image: example/tinyserve
tag: "1.0"
binary: /opt/tinyserve/serve
container_port: 9000
model_mount: /models
ipc_host: false
flags: [--model, --name, --context, --port]
tunables:
  - {env: CONTEXT, field: profile.envelope.max_model_len, type: int, help: context in tokens}
  - {env: PORT, field: profile.port, type: int, scope: compose, help: host port}
  - {env: MODEL_DIR, default: ./models, type: path, scope: compose, help: host model folder}
"""
PROFILE = """# yaml-language-server: $schema=../../schema/profile.schema.json
id: tiny-tinyserve
title: Tiny-7B on TinyServe, one card
status: experimental
model: tiny-7b
weights: bf16
engine: tinyserve-1.0
rig: 2x3090
port: 8300
bind_host: 127.0.0.1
envelope:
  tp: 1
  max_model_len: 8192
serve:
  served_names: [tiny]
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registered()
    root = build_base(tmp_path_factory.mktemp("fourth") / "root")
    (root / "registry/engines/tinyserve-1.0.yaml").write_text(ENGINE)
    (root / "registry/profiles/tiny-tinyserve.yaml").write_text(PROFILE)
    # A family with no release on the package index says so: an engine in service without
    # a facts file is an error (nothing its profiles pass would be judged).
    facts = {"engine": "tinyserve-1.0", "none": "a test server with no public release", "schema": 1}
    (root / "registry/engines/facts/tinyserve-1.0.json").write_text(json.dumps(facts))
    template = root / "templates/entrypoint/engines/tinyserve.sh.j2"
    template.parent.mkdir(parents=True)
    template.write_text(TEMPLATE)
    run = invoke_in(root, "render", "--all")
    assert run.code == 0, run.text
    return root


def test_it_renders_with_its_own_flags_and_names(root: Path) -> None:
    registry = open_registry(root)
    rendered = render_profile(registry, registry.profiles["tiny-tinyserve"])
    assert rendered.service["container_name"] == "tinyserve-tiny-tinyserve"
    script = rendered.script
    assert "exec /opt/tinyserve/serve" in script and '--context "${CONTEXT}"' in script
    assert family("tinyserve").label == "TinyServe"


def test_it_explains(root: Path) -> None:
    registry = open_registry(root)
    profile = registry.profiles["tiny-tinyserve"]
    shown = explain(registry, profile, Scenario((("CONTEXT", "4096"),)))
    assert shown.exe == "serve"
    assert shown.argv == (
        "--model", "/models/tiny-7b-bf16", "--name", "tiny", "--context", "4096", "--port", "9000"
    )  # fmt: skip
    keyed = explain(registry, profile, Scenario((("API_KEY", "sk-tiny"),)))
    assert keyed.env["TINYSERVE_API_KEY"] == "sk-tiny" and "sk-tiny" not in keyed.argv


def test_it_checks(root: Path, tmp_path: Path) -> None:
    run = invoke_in(root, "check")
    assert run.code == 0, run.text
    broken = tmp_path / "root"
    shutil.copytree(root, broken)
    engine = broken / "registry/engines/tinyserve-1.0.yaml"
    engine.write_text(engine.read_text().replace("env: CONTEXT,", "env: CTX,"))
    invoke_in(broken, "render", "--all")
    # Renamed, the tunable still reaches the engine: the dialect asks for the fact.
    registry = open_registry(broken)
    script = render_profile(registry, registry.profiles["tiny-tinyserve"]).script
    assert '--context "${CTX}"' in script


def test_a_tunable_its_dialect_never_reads_is_an_error(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "root"
    shutil.copytree(root, copy)
    engine = copy / "registry/engines/tinyserve-1.0.yaml"
    engine.write_text(
        engine.read_text().replace(
            "tunables:\n",
            "tunables:\n  - {env: DTYPE, field: profile.envelope.dtype, type: word, help: dtype}\n",
        )
    )
    profile = copy / "registry/profiles/tiny-tinyserve.yaml"
    profile.write_text(profile.read_text().replace("  tp: 1\n", "  tp: 1\n  dtype: bfloat16\n"))
    invoke_in(copy, "render", "--all")
    run = invoke_in(copy, "check")
    assert run.code == 1
    assert (
        "registry/engines/tinyserve-1.0.yaml:13: error: [tunable-unused] tunable DTYPE (overrides "
        "envelope.dtype) never reaches the engine of tiny-tinyserve: its command line takes "
        "envelope.dtype from another variable or not at all (name the tunable the way the "
        "engine's dialect reads the fact, or drop it)"
    ) in run.text.splitlines()
