"""`verify --serving`'s long probes: a needle in a prompt sized to the server's context, and a
bounded concurrent multi-turn soak.

The long-context check judges the server: it must take a prompt of the size asked for (counted
by the server, not cut short) and answer it. Recall (the needle comes back) is the model's: a
check of its own, `info` under `--no-recall` (random weights recall nothing). The prompt is
sized from the server's own count of a calibration prompt, so no tokenizer is guessed.
"""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..errors import one_line
from ..hub.serving import EngineUnreachable
from .functional import FAIL, INFO, PASS, Check, Target, body, content, post, refused

# The share of the context the probe fills by default (club-3090's needle ladder tops out at
# about 92% of the context), and the room always left for the template and the answer.
FILL = 0.9
ROOM = 512
SENTENCE = "The archive keeps a record of every ship that passed the northern lighthouse. "
CALIBRATION = 10  # sentences of the two prompts the server counts first (and twice that)
# The most sentences a probe sends (about 80 MB of text; some 15 million tokens by any real
# tokenizer's count): a context or a count past it cannot be filled from this machine.
MAX_SENTENCES = 1 << 20


@dataclass(frozen=True)
class LongResult:
    checks: list[Check]
    filled: int | None  # prompt tokens the server took


def probe_length(target: Target, asked: int | None) -> int | None:
    """The prompt length to probe: the one asked for, else FILL of the server's context."""
    if asked is not None:
        return asked
    if target.context is None:
        return None
    return max(256, min(int(target.context * FILL), target.context - ROOM))


def _prompt(sentences: int, code: str) -> str:
    half = sentences // 2
    needle = f"Remember this: the vault code is {code}. "
    ask = "What is the vault code? Answer with the number only."
    return SENTENCE * half + needle + SENTENCE * (sentences - half) + ask


def _sentences(target: Target, code: str, length: int) -> int | str:
    """The sentences that fill `length` tokens, by the server's counts of two calibration
    prompts; else why they cannot be known."""
    counts = []
    for sentences in (CALIBRATION, 2 * CALIBRATION):
        calib = post(target, body(target, _prompt(sentences, code), 1))
        bad = refused(calib, "long-context")
        counted = calib.usage("prompt_tokens")
        if bad or not counted:
            why = bad.detail if bad else "the server counts no prompt tokens (usage)"
            return f"calibration prompt: {why}"
        counts.append(counted)
    if counts[1] <= counts[0]:
        return (f"calibration prompt: the server counted {counts[0]} and {counts[1]} prompt "
                "tokens for a text and twice that text: its counts cannot size the prompt")  # fmt: skip
    per = (counts[1] - counts[0]) / CALIBRATION  # tokens a sentence
    fixed = counts[0] - CALIBRATION * per  # the template, the needle and the question
    sentences = max(1, int((length - fixed) / per))
    if sentences > MAX_SENTENCES:
        return (f"a prompt of about {length:,} tokens is {sentences:,} sentences by the "
                f"server's counts ({per:g} tokens each), past the {MAX_SENTENCES:,} a probe "
                "sends (give --context N)")  # fmt: skip
    return sentences


def long_context(target: Target, asked: int | None, judge_recall: bool) -> LongResult:
    length = probe_length(target, asked)
    if length is None:
        why = "the server does not say its context: give --context N"
        return LongResult([Check("long-context", FAIL, why)], None)
    code = f"{random.SystemRandom().randrange(100000, 999999)}"
    sentences = _sentences(target, code, length)
    if isinstance(sentences, str):
        return LongResult([Check("long-context", FAIL, sentences)], None)
    answer = post(target, body(target, _prompt(sentences, code), 24))
    bad = refused(answer, "long-context")
    if bad:
        return LongResult([Check("long-context", FAIL, f"a prompt of about {length:,} tokens: "
                                 f"{bad.detail}")], None)  # fmt: skip
    took = answer.usage("prompt_tokens")
    if took is not None and took < 0.8 * length:
        return LongResult([Check("long-context", FAIL, f"about {length:,} tokens were sent, the "
                                 f"server took {took:,}: it cut the prompt short")], took)  # fmt: skip
    said = content(answer.message)
    long = Check("long-context", PASS, f"a prompt of {took or length:,} tokens was taken and "
                 f"answered ({answer.usage('completion_tokens')} tokens)")  # fmt: skip
    found = code in said
    verdict = PASS if found else (FAIL if judge_recall else INFO)
    recall = Check("recall", verdict, f"the needle {code} at half depth was "
                   + ("given back" if found else f"not given back: {one_line(said, 60)!r}")
                   + ("" if judge_recall else " (--no-recall: not judged)"))  # fmt: skip
    return LongResult([long, recall], took)


@dataclass(frozen=True)
class Soak:
    conversations: int
    turns: int
    seconds: float  # the whole soak's bound

    def describe(self) -> str:
        return f"{self.conversations} conversations x {self.turns} turns at once"


TOPICS = ("rivers", "bridges", "clocks", "gardens", "trains", "maps", "bells", "lamps")


class _Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answered = 0
        self.problems: list[str] = []

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)


def _health(target: Target) -> str | None:
    """None when /health answers 200 (or the server has none); else what it said."""
    try:
        status, raw = target.endpoint.send("GET", "/health")
    except EngineUnreachable as exc:
        return str(exc)
    return None if status in (200, 404) else f"/health answered HTTP {status}"


def _conversation(target: Target, n: int, soak: Soak, end: float, tally: _Tally) -> None:
    messages: list[dict[str, str]] = []
    for turn in range(soak.turns):
        if time.monotonic() > end:
            tally.problem(
                f"conversation {n + 1}: past the soak's {soak.seconds:g} s at turn {turn + 1}"
            )
            return
        topic = TOPICS[(n + turn) % len(TOPICS)]
        messages.append({"role": "user", "content": f"Tell me one short fact about {topic}."})
        payload = {**body(target, "", 16), "messages": list(messages)}
        try:
            answer = post(target, payload)
        except EngineUnreachable as exc:
            tally.problem(f"conversation {n + 1} turn {turn + 1}: {exc}")
            return
        bad = refused(answer, "soak")
        tokens = answer.usage("completion_tokens")
        if bad or tokens == 0:
            why = bad.detail if bad else "HTTP 200 with no token (a silent empty answer)"
            tally.problem(f"conversation {n + 1} turn {turn + 1}: {why}")
            return
        with tally.lock:
            tally.answered += 1
        messages.append({"role": "assistant", "content": content(answer.message) or "."})


def soak(target: Target, plan: Soak) -> Check:
    tally = _Tally()
    end = time.monotonic() + plan.seconds
    begun = time.monotonic()
    with ThreadPoolExecutor(max_workers=plan.conversations) as pool:
        futures = [
            pool.submit(_conversation, target, n, plan, end, tally)
            for n in range(plan.conversations)
        ]
    for n, future in enumerate(futures):
        if future.exception() is not None:
            tally.problem(f"conversation {n + 1}: {future.exception()}")
    down = _health(target)
    total = plan.conversations * plan.turns
    took = time.monotonic() - begun
    if down is not None:
        tally.problems.insert(0, f"the server is down after the soak: {down}")
    if tally.problems:
        return Check("soak", FAIL, f"{tally.answered}/{total} turns answered "
                     f"({plan.describe()}); {tally.problems[0]}")  # fmt: skip
    return Check("soak", PASS, f"{total}/{total} turns answered ({plan.describe()}) in "
                 f"{took:.1f} s; /health up after")  # fmt: skip
