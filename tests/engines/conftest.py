"""The real-engine tiers: the session's booted engines, started once for every test process."""

from __future__ import annotations

from typing import Any

import pytest

from profilegen.releases.llamacpp_build import BUILD_TIMEOUT_S
from tests.support import realengines, realvllm
from tests.support.shared import shared_folder

# The first run on a machine builds llama-server (minutes); later runs boot in seconds.
WAIT_S = BUILD_TIMEOUT_S + 600.0
# The first run on a machine installs vLLM's CPU build (minutes); later runs boot in seconds.
VLLM_WAIT_S = 3600.0 + realvllm.BOOT_WITHIN


@pytest.fixture(scope="session")
def real_engines() -> dict[str, Any]:
    reason = realengines.unavailable()
    if reason is not None:
        pytest.skip(reason)
    return realengines.wait(shared_folder(), WAIT_S)


@pytest.fixture(scope="session")
def real_vllm() -> dict[str, Any]:
    reason = realvllm.unavailable()
    if reason is not None:
        pytest.skip(reason)
    return realvllm.wait(shared_folder(), VLLM_WAIT_S)
