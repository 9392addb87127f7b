"""fit with vLLM's own pool sizing: the release's environment where this machine has it.

The vLLM environment (`releases/vllm_env.py`) is used only where it is already built: `fit`
never installs it (the suite builds it). Without it the hand formulas size the pool and
`fit` says so on its `pool by` line. Queries are collected in a first pass and answered in
one probe run (vLLM's import costs ~25 s), then the computation runs again with the answers,
which the result cache keeps by input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..facts.kv_pool import VllmPoolSizer
from ..fit.oracle import ReleaseSizer, vllm_sizing
from ..releases.vllm_env import VERSION, cached_env

T = TypeVar("T")
NOT_BUILT = (
    f"vLLM {VERSION}'s CPU build is not on this machine (the test suite builds it once; "
    "docs/FIT.md)"
)


def sized(compute: Callable[[], T]) -> T:
    """`compute()` with vLLM's own sizing for the release the environment holds."""
    env = cached_env()
    if env is None:
        with vllm_sizing(None, NOT_BUILT):
            return compute()
    sizer = VllmPoolSizer(env.python, VERSION)
    with vllm_sizing(ReleaseSizer(VERSION, sizer)):
        sizer.collecting = True
        try:
            compute()
        finally:
            sizer.collecting = False
        sizer.answer_pending()
        return compute()
