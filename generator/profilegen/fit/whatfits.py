"""What would fit when a profile does not: the largest context at its sequences, and the
most sequences at its context, each found by fitting again (the same rig, engine and
what-ifs).

The search runs on the hand formulas (each step is a fit; vLLM's own sizing code costs a
process per question), which the suite holds to vLLM 0.27.1's answers on every profile of
that release. Contexts are whole multiples of 1,024 tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..units import GIB, MIB
from .options import FitOptions, FitResult
from .oracle import vllm_sizing

STEP = 1024

Fitter = Callable[[FitOptions], FitResult]


@dataclass(frozen=True)
class WouldFit:
    """The nearest settings that fit, or why none does."""

    max_model_len: int | None  # the largest context at the asked sequences (None: none)
    max_num_seqs: int | None  # the most sequences at the asked context (None: none)
    why_not: str | None = None  # why no context fits at all

    def as_dict(self) -> dict[str, int | str | None]:
        return {
            "max_model_len": self.max_model_len,
            "max_num_seqs": self.max_num_seqs,
            "why_not": self.why_not,
        }


def _largest(fits: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest n in [lo, hi) with fits(n), given fits(lo) and not fits(hi)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def would_fit(fit: Fitter, opts: FitOptions, asked: FitResult) -> WouldFit:
    """The largest context at the asked sequences and the most sequences at the asked context."""
    if asked.refused:
        return WouldFit(None, None, "the container refuses these settings: " + asked.refused[0])
    with vllm_sizing(None, "the search for what fits runs on the hand formulas"):
        return _search(fit, opts, asked)


def _context_fits(fit: Fitter, opts: FitOptions, seqs: int) -> Callable[[int], bool]:
    """Whether a context of so many steps fits at `seqs` sequences."""

    def fits(steps: int) -> bool:
        return fit(replace(opts, max_model_len=steps * STEP, max_num_seqs=seqs)).fits

    return fits


def _search(fit: Fitter, opts: FitOptions, asked: FitResult) -> WouldFit:
    seqs, context = asked.max_num_seqs, asked.max_model_len
    top = -(-context // STEP)  # the asked context, rounded up to steps: it does not fit
    smallest = fit(replace(opts, max_model_len=STEP, max_num_seqs=seqs))
    longest = None
    if smallest.fits and top > 1:
        longest = _largest(_context_fits(fit, opts, seqs), 1, top) * STEP
    most = None
    if seqs > 1:

        def seqs_fit(n: int) -> bool:
            return fit(replace(opts, max_num_seqs=n, max_model_len=context)).fits

        if seqs_fit(1):
            most = _largest(seqs_fit, 1, seqs)
    if longest is None and most is None:
        one = fit(replace(opts, max_model_len=STEP, max_num_seqs=1))
        if not one.fits:
            return WouldFit(None, None, _why(one))
        if seqs > 1:  # one sequence fits at a short context: say the context at one
            longest_one = _largest(_context_fits(fit, opts, 1), 1, max(2, context // STEP))
            return WouldFit(longest_one * STEP, 1)
    return WouldFit(longest, most)


def _why(one: FitResult) -> str:
    """Why not even the smallest context with one sequence fits."""
    at = f"at {STEP:,} tokens with one sequence"
    b = one.budget
    held = [
        f"{name} {b[key] / GIB:.2f} GiB"
        for key, name in (("weights", "weights"), ("kv_pool", "KV pool"), ("kv_cache", "KV"))
        if b.get(key)
    ]
    parts = f" ({', '.join(held)} per GPU)" if held else ""
    if one.free_bytes < 0:
        return f"{at} the {one.gpu} is {-one.free_bytes / MIB:,.0f} MiB short{parts}"
    if not one.boots:
        return f"{at} the engine has no room left for the KV pool{parts}"
    return f"{at} the pool holds {one.max_concurrency:.2f} of the requests asked"
