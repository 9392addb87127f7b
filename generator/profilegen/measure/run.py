"""The bench itself: warm-ups, measured runs and the prefill probe, with progress on stderr."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from ..hub.serving import Endpoint, Streamed
from .method import CONTEXT_MARGIN, PREFILL_MAX_TOKENS, PROMPTS, Method, Prompt, filler, request

Progress = Callable[[str], None]


@dataclass(frozen=True)
class PromptResult:
    name: str
    runs: tuple[Streamed, ...]

    @property
    def wall_tps(self) -> float:
        """Mean of each run's tokens over its wall time (what the catalogue's rows report)."""
        return statistics.fmean(r.completion_tokens / r.wall_s for r in self.runs if r.wall_s > 0)

    @property
    def decode_tps(self) -> float | None:
        """Mean of tokens after the first over the time after it; None where a run's answer
        came in one piece (the window is empty)."""
        rates = [
            (r.completion_tokens - 1) / (r.wall_s - r.ttft_s)
            for r in self.runs
            if r.wall_s - r.ttft_s > 1e-3 and r.completion_tokens > 1
        ]
        return statistics.fmean(rates) if len(rates) == len(self.runs) else None

    @property
    def ttft_ms(self) -> float:
        return statistics.fmean(r.ttft_s for r in self.runs) * 1000

    @property
    def cv(self) -> float:
        rates = [r.completion_tokens / r.wall_s for r in self.runs if r.wall_s > 0]
        mean = statistics.fmean(rates)
        return statistics.pstdev(rates) / mean if len(rates) > 1 and mean else 0.0


@dataclass(frozen=True)
class PrefillResult:
    depth: int  # the tokens asked for
    prompt_tokens: int  # as the server counted them (mean)
    tokens_per_s: float  # prompt tokens over the time to the first token (mean)


@dataclass
class BenchResult:
    model: str
    method: Method
    prompts: list[PromptResult] = field(default_factory=list)
    prefill: list[PrefillResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why a part was not measured
    counted_by_server: bool = True


def run_bench(
    endpoint: Endpoint,
    model: str,
    method: Method,
    context: int | None,
    progress: Progress,
    after_run: Callable[[], None] | None = None,
) -> BenchResult:
    result = BenchResult(model, method)
    for prompt in PROMPTS:
        result.prompts.append(_prompt(endpoint, model, prompt, method, progress, after_run))
    for depth in method.prefill_depths:
        if context is not None and depth + CONTEXT_MARGIN > context:
            result.skipped.append(f"prefill at {depth:,} tokens: the context is {context:,}")
            progress(f"prefill {depth:,}: skipped, past the server's context of {context:,}")
            continue
        result.prefill.append(_prefill(endpoint, model, depth, method, progress))
    result.counted_by_server = all(r.counted_by_server for p in result.prompts for r in p.runs)
    return result


def _prompt(
    endpoint: Endpoint,
    model: str,
    prompt: Prompt,
    method: Method,
    progress: Progress,
    after_run: Callable[[], None] | None,
) -> PromptResult:
    body = request(prompt.text, prompt.max_tokens, model)
    for i in range(method.warmups):
        endpoint.stream_chat(body)
        progress(f"{prompt.name}: warm-up {i + 1}/{method.warmups}")
    runs = []
    for i in range(method.runs):
        run = endpoint.stream_chat(body)
        runs.append(run)
        if after_run is not None:
            after_run()
        rate = run.completion_tokens / run.wall_s if run.wall_s > 0 else 0.0
        progress(
            f"{prompt.name}: run {i + 1}/{method.runs}: {run.completion_tokens} tokens in "
            f"{run.wall_s:.2f} s, {rate:.1f} tok/s, first token after {run.ttft_s * 1000:.0f} ms"
        )
    return PromptResult(prompt.name, tuple(runs))


def _prefill(
    endpoint: Endpoint, model: str, depth: int, method: Method, progress: Progress
) -> PrefillResult:
    rates, counted = [], []
    for i in range(method.prefill_runs):
        run = endpoint.stream_chat(request(filler(depth, i), PREFILL_MAX_TOKENS, model))
        tokens = run.prompt_tokens or depth
        counted.append(tokens)
        rates.append(tokens / run.ttft_s if run.ttft_s > 0 else 0.0)
        progress(f"prefill {depth:,}: run {i + 1}/{method.prefill_runs}: {tokens:,} prompt "
                 f"tokens, first token after {run.ttft_s * 1000:.0f} ms")  # fmt: skip
    return PrefillResult(depth, round(statistics.fmean(counted)), statistics.fmean(rates))
