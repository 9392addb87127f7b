"""One overall deadline per network operation: every request gets only what is left of it.

A per-request timeout multiplied by retries and files is how a blackholed host made
`render -o` take nine minutes to fail. The deadline is set once for the whole command
(`--timeout`, PROFILEGEN_NETWORK_TIMEOUT, else 30 s) and every request, retry and wait
draws on it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from ..errors import NetworkError, UsageError

ENV = "PROFILEGEN_NETWORK_TIMEOUT"
DEFAULT_SECONDS = 30.0


def network_seconds(flag: float | None = None) -> float:
    """The deadline in seconds: --timeout, else PROFILEGEN_NETWORK_TIMEOUT, else 30."""
    if flag is not None:
        if flag <= 0:
            raise UsageError(f"--timeout must be more than 0 seconds, got {flag:g}")
        return flag
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return DEFAULT_SECONDS
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{ENV} must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise UsageError(f"{ENV} must be more than 0 seconds, got {raw!r}")
    return value


@dataclass(frozen=True)
class Deadline:
    """A point in (monotonic) time after which no request starts and none waits on."""

    seconds: float
    end: float = field(default=0.0)

    @classmethod
    def start(cls, flag: float | None = None) -> Deadline:
        seconds = network_seconds(flag)
        return cls(seconds, time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def timeout(self, per_request: float) -> float:
        """A request's timeout: its own, cut to what is left (raises when nothing is)."""
        left = self.remaining()
        if left <= 0:
            raise self.error()
        return min(per_request, left)

    def error(self, what: str = "the network operation") -> NetworkError:
        return NetworkError(
            f"{what} did not finish within {self.seconds:g} s (raise it with --timeout or {ENV})"
        )
