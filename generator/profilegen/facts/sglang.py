"""SGLang's facts, read by its own ServerArgs parser in a throw-away CPU environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..model import Engine
from .releases import Artifact, download, environment, run_probe

PROBE = Path(__file__).parent / "probes" / "sglang_probe.py"
METHOD = (
    "sglang.launch_server's own argument parser (ServerArgs.add_cli_args) asked for every "
    "option; the SGLANG_ variables its environ module declares"
)

# The engine variables it reads go by these prefixes (one it does not know is a warning).
ENV_PREFIXES = ("SGLANG_", "SGL_")

# The package a patch edits in the image (None: a compiled release, no source to patch).
PACKAGE: str | None = "sglang"


def requirement(version: str) -> str:
    return f"sglang=={version}"


def fetch(version: str, offline: bool = False) -> Artifact:
    return download(requirement(version), offline=offline)


def read(artifact: Artifact) -> dict[str, Any]:
    python = environment(artifact, "sglang", torch=True)
    data: dict[str, Any] = json.loads(run_probe(python, PROBE))
    return data


def release(engine: Engine) -> str | None:
    """The SGLang release an official image carries (its tag)."""
    if engine.image == "lmsysorg/sglang" and engine.version and engine.tag == f"v{engine.version}":
        return engine.version
    return None
