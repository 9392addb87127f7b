"""Test-session settings shared by every suite."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_PRIVATE_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # profilegen caches compiled templates, schemas and patch files under PROFILEGEN_CACHE:
    # the tests use a private one, never the user's ~/.cache/profilegen.
    if "PROFILEGEN_CACHE" not in os.environ:
        folder = tempfile.mkdtemp(prefix="profilegen-test-cache-")
        _PRIVATE_CACHE.append(folder)
        os.environ["PROFILEGEN_CACHE"] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _PRIVATE_CACHE:
        shutil.rmtree(folder, ignore_errors=True)
