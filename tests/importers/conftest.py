"""The importers' shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from .fixtures import empty_registry


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """An empty registry: the GPU the rigs need and the schemas."""
    return empty_registry(tmp_path / "ours")
