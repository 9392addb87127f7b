"""Fixtures of the suites that talk to the fake Hub (a plugin of the root conftest).

A module that uses the Hub marks itself `pytest.mark.usefixtures("isolated_hub_env")`: a
developer's or CI's Hub settings (endpoint, token, offline mode, cache, MODEL_DIR) never leak
into a fake-Hub run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fakehub import FakeHub

LEAKY = ("HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "MODEL_DIR")


@pytest.fixture
def isolated_hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in LEAKY:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub, a real HTTP server on 127.0.0.1, as HF_ENDPOINT."""
    with FakeHub() as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        yield fake
