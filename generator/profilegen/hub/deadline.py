"""One overall deadline per network operation: every request gets only what is left of it.

A per-request timeout multiplied by retries and files is how a blackholed host made
`render -o` take nine minutes to fail. The deadline is set once for the whole command
(`--timeout`, PROFILEGEN_NETWORK_TIMEOUT, else 30 s) and every request, retry and wait
draws on it.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from ..errors import NetworkError, UsageError

T = TypeVar("T")
R = TypeVar("R")
ENV = "PROFILEGEN_NETWORK_TIMEOUT"
DEFAULT_SECONDS = 30.0
# A day: past it a deadline no longer bounds anything (and an infinite one overflows the
# clock arithmetic of socket timeouts).
MAX_SECONDS = 86_400.0


def seconds_or_none(text: str) -> float | None:
    """A deadline in seconds from text: a finite number more than 0, at most a day."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value <= MAX_SECONDS else None  # NaN fails both comparisons


def seconds_wanted(name: str, got: object) -> UsageError:
    return UsageError(
        f"{name} must be a number of seconds more than 0 and at most {MAX_SECONDS:,.0f} "
        f"(a day), got {got!r}"
    )


def network_seconds(flag: float | None = None) -> float:
    """The deadline in seconds: --timeout, else PROFILEGEN_NETWORK_TIMEOUT, else 30."""
    if flag is not None:
        if seconds_or_none(repr(flag)) is None:
            raise seconds_wanted("--timeout", flag)
        return flag
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return DEFAULT_SECONDS
    value = seconds_or_none(raw)
    if value is None:
        raise seconds_wanted(ENV, raw)
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


def parallel(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    deadline: Deadline,
    *,
    grace: float = 0.0,
    progress: Callable[[R], None] | None = None,
) -> dict[int, R]:
    """`fn` over `items` on at most `workers` threads; the results by index, as many as are in
    when the deadline (plus `grace`) passes. `progress` is called on this thread as each
    arrives.

    The workers are daemon threads: one stuck in a request that never ends (a host that
    trickles a byte at a time never trips a read timeout) is abandoned, and cannot keep the
    process alive once it has reported the deadline.
    """
    results: dict[int, R] = {}
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    done: queue.SimpleQueue[tuple[int, bool, object]] = queue.SimpleQueue()
    for index in range(len(items)):
        todo.put(index)

    def work() -> None:
        while not deadline.expired:
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((index, True, fn(items[index])))
            except BaseException as exc:  # a bug or a failed write: the caller's, at once
                done.put((index, False, exc))
                return

    for _ in range(min(workers, len(items))):
        threading.Thread(target=work, name="profilegen-net", daemon=True).start()
    end = deadline.end + grace
    while len(results) < len(items):
        try:
            index, ok, value = done.get(timeout=max(0.0, end - time.monotonic()))
        except queue.Empty:
            break
        if not ok:
            raise value  # type: ignore[misc]
        results[index] = value  # type: ignore[assignment]
        if progress is not None:
            progress(results[index])
    return results


def bounded(fn: Callable[[], R], deadline: Deadline, what: str, grace: float = 0.25) -> R:
    """`fn()` on a daemon thread: its result or its exception, or the deadline's error once
    the deadline (plus `grace`) has passed (the thread is then abandoned, as in `parallel`)."""
    done: queue.SimpleQueue[tuple[bool, object]] = queue.SimpleQueue()

    def work() -> None:
        try:
            done.put((True, fn()))
        except BaseException as exc:  # handed to the calling thread
            done.put((False, exc))

    threading.Thread(target=work, name="profilegen-net", daemon=True).start()
    try:
        ok, value = done.get(timeout=max(0.0, deadline.end + grace - time.monotonic()))
    except queue.Empty:
        raise deadline.error(what) from None
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]
