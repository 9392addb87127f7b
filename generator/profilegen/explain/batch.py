"""Explain runs handed to boxes while more are still being prepared.

A check renders its profiles one after another; each profile's scenarios are added here as
it is rendered, and as soon as enough launches wait they make a box of their own, which
runs when one of a few workers is free: the boxes run while Python renders the rest and
reads the rules. `finish` sends what is left, shared over the boxes, and gives every run
back in the order the items were added (`close` sends the rest without waiting, so that
other work goes on beside them). A group of runs the result cache holds is not run again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from .memo import recall, remember
from .sandbox import Job, Run, StagedBox, stage_box

MAX_BOXES = 4
# Launches that make a box of their own while items are still being added (about a second
# of a box's time: its set-up is worth a few launches); boxes wait for a free worker in turn.
LEAST_LAUNCHES = 96


class Runnable(Protocol):
    """One launch to run: its record's key, its job (one launch), and what it shares a
    mount namespace with (items of one group and layout run in one job)."""

    @property
    def key(self) -> str | None: ...

    @property
    def job(self) -> Job: ...

    @property
    def group(self) -> Hashable: ...


def batch_jobs(items: Sequence[Runnable]) -> tuple[list[list[int]], list[Job]]:
    """The jobs that run `items`: items of one group share one job (one mount namespace);
    with each job, the indexes of the items it runs, in launch order."""
    groups: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(item.group, []).append(i)
    jobs = [
        Job(
            items[members[0]].job.layout,
            tuple(items[i].job.launches[0] for i in members),
            items[members[0]].job.engines,
        )
        for members in groups.values()
    ]
    return list(groups.values()), jobs


class Batch:
    """Runs added items in a few boxes, starting while items are still being added.

    Boxes are staged as their items come, and handed to a worker only when one is free, so
    that an interrupted process waits for the boxes running, never for those not begun."""

    def __init__(self, boxes: int | None = None, least: int = LEAST_LAUNCHES) -> None:
        self._boxes = max(1, min(boxes or os.cpu_count() or 1, MAX_BOXES))
        self._least = least
        self._runs: list[Run | None] = []
        # The stored groups not yet run: their items' indexes and keys.
        self._unsaved: list[tuple[list[int], list[str]]] = []
        self._waiting: list[tuple[int, Runnable]] = []
        # Each box staged: the item indexes of each of its jobs, and the box; then its run.
        self._staged: list[tuple[list[list[int]], StagedBox]] = []
        self._sent: list[tuple[list[list[int]], StagedBox, Future[None]]] = []
        self._lock = threading.RLock()
        self._pool: ThreadPoolExecutor | None = None

    def add(self, items: Iterable[Runnable]) -> None:
        """Adds one group of items (a profile's scenarios, stored as one entry); those waiting
        make a box once there are enough of them."""
        added = list(items)
        first = len(self._runs)
        self._runs.extend([None] * len(added))
        pairs = [(i, key) for i, item in enumerate(added, first) if (key := item.key) is not None]
        stored, keys = [i for i, _ in pairs], [key for _, key in pairs]
        hit = recall(keys)
        if hit is not None:
            for i, run in zip(stored, hit, strict=True):
                self._runs[i] = run
        elif keys:
            self._unsaved.append((stored, keys))
        self._waiting.extend(
            (i, item) for i, item in enumerate(added, first) if self._runs[i] is None
        )
        if len(self._waiting) >= self._least:
            self._stage(1)

    def close(self) -> None:
        """No more items: what waits goes to the boxes now, shared out."""
        self._stage(self._boxes)

    @property
    def started(self) -> int:
        """The boxes staged so far."""
        with self._lock:
            return len(self._staged) + len(self._sent)

    def ready(self) -> bool:
        """Whether `finish` would not wait: every item run."""
        with self._lock:
            pending = self._waiting or self._staged
            return not pending and all(future.done() for _, _, future in self._sent)

    def finish(self) -> list[Run]:
        """Every item's run, in the order added (each new one is remembered)."""
        try:
            self.close()
            done = 0
            while True:
                with self._lock:
                    if done == len(self._sent) and not self._staged:
                        break
                    if done == len(self._sent):
                        # The last box ended before its worker took the next: take it here.
                        self._start()
                    if done == len(self._sent):
                        raise RuntimeError("the explain boxes stopped before their runs")
                    members, staged, future = self._sent[done]
                future.result()
                self._collect(members, staged)
                done += 1
        finally:
            self.cancel()
        return [run for run in self._runs if run is not None]

    def cancel(self) -> None:
        """Stops: boxes not begun are dropped, those running are waited for."""
        with self._lock:
            dropped, self._staged = self._staged, []
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        for _, staged in dropped:
            staged.discard()
        for _, staged, _ in self._sent:
            staged.discard()

    def _collect(self, members: list[list[int]], staged: StagedBox) -> None:
        for job_members, job_runs in zip(members, staged.collect(), strict=True):
            for i, run in zip(job_members, job_runs, strict=True):
                self._runs[i] = run
        waiting = []
        for indexes, keys in self._unsaved:
            runs = [got for i in indexes if (got := self._runs[i]) is not None]
            if len(runs) == len(indexes):
                remember(keys, runs)
            else:
                waiting.append((indexes, keys))
        self._unsaved = waiting

    def _stage(self, shares: int) -> None:
        """The waiting items, as jobs shared out over up to `shares` boxes."""
        if not self._waiting:
            return
        indexes = [i for i, _ in self._waiting]
        groups, jobs = batch_jobs([item for _, item in self._waiting])
        self._waiting = []
        count = max(1, min(shares, len(jobs)))
        for share in range(count):
            picked = range(share, len(jobs), count)
            members = [[indexes[k] for k in groups[j]] for j in picked]
            staged = stage_box([jobs[j] for j in picked])
            with self._lock:
                self._staged.append((members, staged))
        self._start()

    def _start(self, _done: object = None) -> None:
        """Hands staged boxes to free workers (also as each box ends, from its worker)."""
        with self._lock:
            running = sum(not future.done() for _, _, future in self._sent)
            while self._staged and running < self._boxes:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=self._boxes)
                members, staged = self._staged[0]
                try:
                    future = self._pool.submit(staged.run)
                except RuntimeError:  # the interpreter is shutting down
                    return
                self._staged.pop(0)
                self._sent.append((members, staged, future))
                running += 1
                future.add_done_callback(self._start)
