"""Test-session settings shared by every suite."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # profilegen caches compiled templates, schemas and patch files under PROFILEGEN_CACHE:
    # the tests use a private one, never the user's ~/.cache/profilegen.
    if "PROFILEGEN_CACHE" not in os.environ:
        os.environ["PROFILEGEN_CACHE"] = tempfile.mkdtemp(prefix="profilegen-test-cache-")
