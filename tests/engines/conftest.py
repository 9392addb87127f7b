"""The real-engine tier: the session's booted engines, started once for every test process."""

from __future__ import annotations

from typing import Any

import pytest

from profilegen.releases.llamacpp_build import BUILD_TIMEOUT_S
from tests.support import realengines
from tests.support.shared import shared_folder

# The first run on a machine builds llama-server (minutes); later runs boot in seconds.
WAIT_S = BUILD_TIMEOUT_S + 600.0


@pytest.fixture(scope="session")
def real_engines() -> dict[str, Any]:
    reason = realengines.unavailable()
    if reason is not None:
        pytest.skip(reason)
    return realengines.wait(shared_folder(), WAIT_S)
