"""vLLM's facts, read by its own `vllm serve` parser in a throw-away CPU environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..model import Engine
from .releases import Artifact, download, environment, run_probe

PROBE = Path(__file__).parent / "probes" / "vllm_probe.py"
METHOD = (
    "vllm serve's own argument parser (CPU platform) asked for every option, the --no- form "
    "of each switch it accepts, and SpeculativeConfig/CompilationConfig fields; vllm/envs.py"
)

# The engine variables it reads go by these prefixes (one it does not know is a warning).
ENV_PREFIXES = ("VLLM_",)

# The package a patch edits in the image (None: a compiled release, no source to patch).
PACKAGE: str | None = "vllm"


def requirement(version: str) -> str:
    return f"vllm=={version}"


def fetch(version: str, offline: bool = False) -> Artifact:
    return download(requirement(version), offline=offline)


def read(artifact: Artifact) -> dict[str, Any]:
    """The facts the probe prints, run by the release's own Python."""
    python = environment(artifact, "vllm", torch=True)
    data: dict[str, Any] = json.loads(run_probe(python, PROBE))
    return data


def release(engine: Engine) -> str | None:
    """The vLLM release an engine's image carries: an official image tagged with it."""
    if engine.image == "vllm/vllm-openai" and engine.version and engine.tag == f"v{engine.version}":
        return engine.version
    return None
