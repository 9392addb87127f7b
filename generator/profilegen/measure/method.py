"""The canonical bench: what is asked, how, and how often (club-3090's method, as facts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NARRATIVE = "Write a detailed 800-word essay explaining transformer attention."
CODE = "Write a Python implementation of quicksort with comments explaining each step."
# Sampling pinned so that rows from different rigs compare; thinking off.
SAMPLING: dict[str, Any] = {
    "temperature": 0.6,
    "top_p": 0.95,
    "top_k": 20,
    "presence_penalty": 0.0,
    "chat_template_kwargs": {"enable_thinking": False},
}
WARMUPS = 3
RUNS = 5
PREFILL_DEPTHS = (10_000, 90_000)
PREFILL_RUNS = 3
PREFILL_MAX_TOKENS = 16
# Room left in the context for the answer and the chat template's own tokens.
CONTEXT_MARGIN = 1_024


@dataclass(frozen=True)
class Prompt:
    name: str  # narrative | code
    text: str
    max_tokens: int


PROMPTS = (Prompt("narrative", NARRATIVE, 1000), Prompt("code", CODE, 800))


@dataclass(frozen=True)
class Method:
    warmups: int = WARMUPS
    runs: int = RUNS
    prefill_depths: tuple[int, ...] = PREFILL_DEPTHS
    prefill_runs: int = PREFILL_RUNS

    @property
    def canonical(self) -> bool:
        return (self.warmups, self.runs, self.prefill_runs) == (WARMUPS, RUNS, PREFILL_RUNS)

    def describe(self) -> str:
        depths = ", ".join(f"{d // 1000}k" for d in self.prefill_depths) or "none"
        kind = "canonical bench" if self.canonical else "bench (not the canonical counts)"
        return (
            f"{kind}: {self.warmups} warm-ups + {self.runs} measured runs per prompt, pinned "
            f"sampling, thinking off; prefill probe at {depths}"
        )


def request(prompt: str, max_tokens: int, model: str) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        **SAMPLING,
    }


def filler(tokens: int, nonce: int) -> str:
    """A long prompt of about `tokens` tokens; the nonce first, so that no run reuses another's
    cached prefix."""
    sentence = "The quick brown fox measures prompt processing on a steady shape of text. "
    # About 14 tokens a sentence with common tokenizers; the server's usage gives the truth.
    count = max(1, tokens // 14)
    return f"Run {nonce}. " + sentence * count + "Reply with one word: done."
