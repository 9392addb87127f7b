"""Shared fixtures of the fit tests: the real registry and a CLI runner without tracebacks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from profilegen.cli import cli
from profilegen.registry import Registry
from tests.support.repo import shared_registry

ROOT = Path(__file__).resolve().parents[2]
SEED = "qwen38-27b-dual-dflash15-fast"  # DFlash2 n=15, pinned 9e9-byte pool, WSL2 rig
MTP = "qwen38-27b-dual-fast"  # built-in MTP n=4, util 0.90, fp8 KV
GGUF = "qwen38-27b-single-iq4xs"  # llama.cpp, q4_0 KV, one 3090

Invoke = Callable[..., Result]


def with_architecture(registry: Registry, model_id: str, **update: Any) -> Registry:
    """The registry with one model's architecture facts changed (nothing derived kept)."""
    model = registry.models[model_id]
    arch = model.architecture.model_copy(update=update)
    models = {**registry.models, model_id: model.model_copy(update={"architecture": arch})}
    return dataclasses.replace(registry, models=models)


@pytest.fixture(scope="session")
def registry() -> Registry:
    return shared_registry()


@pytest.fixture
def invoke(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    # The real registry, loaded once: fit never changes it, and loading dominates the run time.
    monkeypatch.setattr("profilegen.registry.open_registry_cached", lambda root: registry)

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["--root", str(ROOT), *args], catch_exceptions=False)

    return run


@pytest.fixture
def fit_json(invoke: Invoke) -> Callable[..., dict[str, Any]]:
    """`profilegen fit PROFILE ARGS --format json`, parsed."""

    def run(profile: str, *args: str) -> dict[str, Any]:
        result = invoke("fit", profile, *args, "--format", "json")
        assert result.exit_code in (0, 1), result.output
        data: dict[str, Any] = json.loads(result.stdout)
        return data

    return run
