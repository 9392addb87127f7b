"""Refitting the calibrated constants: each one fitted again from the measured boots that name
it in `fitted:` (holding the others), so `fit calibration` can tell a stale constant, and
`leave_one_out` refits without each record in turn and predicts it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..lockfile.lock import Lock
from ..registry import Registry
from ..units import MIB
from . import formulas as fm
from .calibrate import CalibrationPoint, Record, predict_record, record_point, records

# A refitted constant further than this from the stored one means the stored one is stale.
STALE_BYTES = 32 * MIB
REFIT_PASSES = 3
_SEARCH_LIMIT = 8 << 30
_STEP = MIB // 16
_STEPS = 2 * _SEARCH_LIMIT // _STEP


def _boundary(
    registry: Registry,
    rec: Record,
    name: str,
    constants: fm.Constants,
    lock: Lock | None,
    strict: bool,
    near: int,
) -> int:
    """The smallest value on the search grid at which the prediction has moved past the
    measurement (strict: past it or onto it): every constant is charged memory, so the
    prediction falls as it grows (KV tokens) or rises with it (GPU memory in use). The grid
    is that of a bisection of +-8 GiB down to 64 KiB; the search starts at `near` (where the
    constant is now) and widens its steps until the boundary is bracketed, so a constant that
    barely moves costs a few predictions instead of eighteen."""
    falls = rec.quantity == "kv_pool_tokens"

    def past(k: int) -> bool:  # grid point k: -8 GiB + k steps (0 and _STEPS never asked)
        if k <= 0 or k >= _STEPS:
            return k >= _STEPS
        value = predict_record(registry, rec, constants.with_value(name, _grid(k)), lock)
        diff = rec.measured - value if falls else value - rec.measured
        return diff > 0 or (strict and diff == 0)

    lo, hi = _bracket(past, min(max((near + _SEARCH_LIMIT) // _STEP, 1), _STEPS - 1))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if past(mid):
            hi = mid
        else:
            lo = mid
    return _grid(hi)


def _bracket(past: Callable[[int], bool], k: int) -> tuple[int, int]:
    """Grid points lo < hi with `past` false at lo and true at hi, found from k by doubling."""
    width = 1
    if past(k):
        hi, lo = k, k - 1
        while lo > 0 and past(lo):
            hi, width = lo, width * 2
            lo = hi - width
        return max(lo, 0), hi
    lo, hi = k, k + 1
    while hi < _STEPS and not past(hi):
        lo, width = hi, width * 2
        hi = lo + width
    return lo, min(hi, _STEPS)


def _grid(k: int) -> int:
    return -_SEARCH_LIMIT + k * _STEP


def _solve(
    registry: Registry, rec: Record, name: str, constants: fm.Constants, lock: Lock | None
) -> int:
    """The constant's value that makes this record's prediction meet the measurement: the
    middle of the range that reproduces it (token counts move in whole KV blocks). Kept with
    the registry: the refits of a leave-one-out solve most records under the same constants."""
    solved: dict[Any, tuple[Lock | None, int]] = registry.derived("fit-solves", lambda _r: {})
    key = (rec.profile, rec.index, rec.quantity, name, constants)
    if (hit := solved.get(key)) is not None and hit[0] is lock:
        return hit[1]
    now = constants.value(name)
    first = _boundary(registry, rec, name, constants, lock, strict=True, near=now)
    last = _boundary(registry, rec, name, constants, lock, strict=False, near=first)
    value = (first + last) // 2
    solved[key] = (lock, value)
    return value


def _fit_one(
    registry: Registry, recs: list[Record], name: str, constants: fm.Constants, lock: Lock | None
) -> fm.Constants:
    mine = [r for r in recs if name in r.evidence.fitted]
    if not mine:
        return constants
    values = [_solve(registry, r, name, constants, lock) for r in mine]
    return constants.with_value(name, round(sum(values) / len(values)))


def refit(
    registry: Registry,
    lock: Lock | None = None,
    leave_out: str | None = None,
    start: fm.Constants = fm.DEFAULT_CONSTANTS,
) -> fm.Constants:
    """Every constant fitted again from its records (without `leave_out`), in turn; a pass
    that changes nothing ends it (the next would give the same)."""
    recs = [r for r in records(registry) if r.evidence.calibration and r.name != leave_out]
    constants = start
    for _ in range(REFIT_PASSES):
        before = constants
        for name in fm.CONSTANT_NAMES:
            constants = _fit_one(registry, recs, name, constants, lock)
        if constants == before:
            break
    return constants


@dataclass(frozen=True)
class ConstantCheck:
    name: str
    stored: int
    refit: int
    points: tuple[str, ...]

    @property
    def stale(self) -> bool:
        return bool(self.points) and abs(self.refit - self.stored) > STALE_BYTES


def constant_checks(registry: Registry, lock: Lock | None = None) -> list[ConstantCheck]:
    fitted = refit(registry, lock)
    recs = records(registry)
    return [
        ConstantCheck(
            name,
            fm.DEFAULT_CONSTANTS.value(name),
            fitted.value(name),
            tuple(r.name for r in recs if name in r.evidence.fitted and r.evidence.calibration),
        )
        for name in fm.CONSTANT_NAMES
    ]


def leave_one_out(registry: Registry, lock: Lock | None = None) -> list[CalibrationPoint]:
    """Each fitted record predicted by constants refitted without it.

    A record whose constants have no other record to be fitted to cannot be left out: it is
    reported as a `sole point` (nothing was predicted).
    """
    out = []
    every = records(registry)
    for rec in every:
        if not rec.evidence.calibration or not rec.evidence.fitted:
            continue
        others = [
            r for r in every
            if r.name != rec.name and r.evidence.calibration
            and set(r.evidence.fitted) & set(rec.evidence.fitted)
        ]  # fmt: skip
        shared = {n for r in others for n in r.evidence.fitted}
        if not set(rec.evidence.fitted) <= shared:
            out.append(replace(record_point(registry, rec, fm.DEFAULT_CONSTANTS, lock), sole=True))
            continue
        constants = refit(registry, lock, leave_out=rec.name)
        point = record_point(registry, rec, constants, lock)
        out.append(replace(point, fitted=()))
    return out
