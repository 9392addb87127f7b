"""Scratch copies of this repository's data, and a schema cache for check-heavy tests."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from profilegen.generated import schemas as schema
from profilegen.registry import Registry, open_registry_cached

REPO = Path(__file__).resolve().parents[2]
# What a registry repository holds besides the code: enough for every command.
DATA = (
    "registry",
    "schema",
    "compose",
    "gateways",
    "k8s",
    "templates",
    "docs",
    "profilegen.lock.json",
)


@functools.cache
def shared_registry() -> Registry:
    """This repository's registry, loaded once per test process (never modify it): through
    the session's registry cache, so the test processes parse and validate it once."""
    return open_registry_cached(REPO)


def copy_repo(dest: Path) -> Path:
    """Copies the registry data of this repository into dest (created); returns dest."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in DATA:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name)
        elif source.is_file():
            shutil.copy2(source, dest / name)
    return dest


@pytest.fixture(scope="module")
def fast_schemas() -> Iterator[None]:
    """The schemas depend on the models only: build them once per module, not per check."""
    built = schema.build_schemas()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "build_schemas", lambda: dict(built))
        yield
