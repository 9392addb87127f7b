"""A streamed chat completion read event by event: server-sent `data:` lines of JSON objects,
the first token's time, the usage a server reports last. Anything else the server sends in a
`data:` line (a list, a choice that is no object, a token count that is no count) is an error
naming the event, never a guess."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ..errors import EXIT_UNREACHABLE, ProfilegenError

_TOKEN_KEYS = ("content", "reasoning", "reasoning_content", "tool_calls")


class BadStream(ProfilegenError):
    """The server's stream is not an OpenAI-compatible one."""

    exit_code = EXIT_UNREACHABLE


@dataclass(frozen=True)
class Streamed:
    wall_s: float
    ttft_s: float
    completion_tokens: int
    prompt_tokens: int | None
    # Whether the token counts came from the server's usage (else: content chunks counted).
    counted_by_server: bool


# More tokens than any context holds: a count past it is no count (a 400-digit one made every
# speed computed from it an OverflowError).
MAX_TOKENS = 2**32


def _count(value: Any) -> int | None:
    """A token count as JSON gives it: a whole number, not negative and not past MAX_TOKENS
    (true is no count)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


def _shown(data: str) -> str:
    text = "".join(c if c.isprintable() else " " for c in data)
    return text if len(text) <= 120 else text[:117] + "..."


class StreamReader:
    """Feed it the stream's lines; `result()` when it is done (or the stream ended)."""

    def __init__(self, where: str, sent: float) -> None:
        self.where = where
        self.sent = sent
        self.first: float | None = None
        self.chunks = 0
        self.usage: dict[str, Any] = {}
        self.events = 0
        self.done = False

    def _bad(self, why: str, data: str) -> BadStream:
        return BadStream(
            f"{self.where}: event {self.events} of the stream {why}: {_shown(data)} "
            "(not an OpenAI-compatible stream)"
        )

    def feed(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            return  # comments, keep-alives, event names
        data = line[5:].strip()
        self.events += 1
        if data == "[DONE]":
            self.done = True
            return
        try:
            event = json.loads(data)
        except (ValueError, RecursionError):
            raise self._bad("is not JSON", data) from None
        if not isinstance(event, dict):
            raise self._bad("is not a JSON object", data)
        self._event(event, data)

    def _event(self, event: dict[str, Any], data: str) -> None:
        usage = event.get("usage")
        if usage is not None:
            self._usage(usage, data)
        choices = event.get("choices")
        if choices is None:
            return
        if not isinstance(choices, list):
            raise self._bad("has choices that are not a list", data)
        for choice in choices:
            if not isinstance(choice, dict):
                raise self._bad("has a choice that is not an object", data)
            delta = choice.get("delta")
            if delta is None:
                continue
            if not isinstance(delta, dict):
                raise self._bad("has a delta that is not an object", data)
            # A token arrived: text, the reasoning parser's share (vLLM 0.27 names it
            # `reasoning`, older servers `reasoning_content`) or a tool call's piece.
            if any(delta.get(key) for key in _TOKEN_KEYS):
                self.chunks += 1
                if self.first is None:
                    self.first = time.perf_counter()

    def _usage(self, usage: Any, data: str) -> None:
        if not isinstance(usage, dict):
            raise self._bad("has a usage that is not an object", data)
        for name in ("completion_tokens", "prompt_tokens"):
            if usage.get(name) is not None and _count(usage[name]) is None:
                raise self._bad(f"has a usage.{name} that is not a token count", data)
        self.usage = usage

    def result(self) -> Streamed:
        done = time.perf_counter()
        tokens = _count(self.usage.get("completion_tokens"))
        return Streamed(
            wall_s=done - self.sent,
            ttft_s=(self.first if self.first is not None else done) - self.sent,
            completion_tokens=tokens if tokens is not None else self.chunks,
            prompt_tokens=_count(self.usage.get("prompt_tokens")),
            counted_by_server=tokens is not None,
        )
