"""`verify --serving`: functional checks of a running server, one verdict each.

Each check judges the server, not the model it serves: a tool call is judged on what the
profile's tool parser returns for a call the model wrote (forced into the parser's own format
where the engine can constrain output, vLLM's structured outputs); thinking on what the
reasoning parser separates. What only the model decides (whether it thinks, whether it calls a
tool unforced) is reported as `skip` with the reason when the model did not do it; recall of
a needle is judged, unless `--no-recall` makes it `info` (a server of random weights).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import one_line
from ..families import Family, family
from ..hub.serving import Endpoint, EngineUnreachable
from ..hub.stream import BadStream, StreamReader
from ..model import Profile
from ..registry import Registry

PASS, FAIL, SKIP, INFO = "pass", "fail", "skip", "info"
# The reasoning switch every request sends (bench's sampling does the same).
THINK_OFF = {"enable_thinking": False}
THINK_ON = {"enable_thinking": True}
CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # pass | fail | skip | info
    detail: str

    def line(self) -> str:
        return f"{self.name:<13} {self.status.upper():<4}  {self.detail}"


@dataclass(frozen=True)
class Target:
    """What the checks know of the server: its endpoint, the name asked for, its engine's
    family (None: no profile says) and the profile's parsers."""

    endpoint: Endpoint
    model: str
    family: Family | None
    profile: Profile | None
    context: int | None

    @property
    def tool_parser(self) -> str | None:
        return self.profile.serve.tool_call_parser if self.profile else None

    @property
    def tools_served(self) -> bool | None:
        """Whether the profile serves tool calls (None: no profile to say)."""
        if self.profile is None:
            return None
        serve = self.profile.serve
        if self.family is not None and self.family.tools_by == "template":
            return serve.jinja
        return bool(serve.tool_call_parser) or serve.auto_tool_choice

    @property
    def reasoning(self) -> bool | None:
        return bool(self.profile.serve.reasoning_parser) if self.profile else None


def family_of(registry: Registry, profile: Profile | None) -> Family | None:
    return family(registry.engines[profile.engine].kind) if profile is not None else None


def body(target: Target, text: str, max_tokens: int, **extra: Any) -> dict[str, Any]:
    return {
        "model": target.model,
        "messages": [{"role": "user", "content": text}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "chat_template_kwargs": THINK_OFF,
        **extra,
    }


@dataclass(frozen=True)
class Answer:
    status: int
    data: dict[str, Any] | None
    text: str  # the body as it may be printed (brief, no control characters)

    @property
    def choice(self) -> dict[str, Any]:
        choices = (self.data or {}).get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return choices[0]
        return {}

    @property
    def message(self) -> dict[str, Any]:
        msg = self.choice.get("message")
        return msg if isinstance(msg, dict) else {}

    @property
    def finish(self) -> Any:
        return self.choice.get("finish_reason")

    def usage(self, name: str) -> int | None:
        usage = (self.data or {}).get("usage")
        value = usage.get(name) if isinstance(usage, dict) else None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**32:
            return None  # no count (a bound past any context: a 400-digit one is none)
        return value


def post(target: Target, payload: dict[str, Any], path: str = CHAT_PATH) -> Answer:
    status, raw = target.endpoint.send("POST", path, payload)
    text = raw.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    return Answer(status, data if isinstance(data, dict) else None, one_line(text, 160))


def refused(answer: Answer, what: str) -> Check | None:
    """A failing check where the server did not answer with a chat completion."""
    if answer.status != 200:
        return Check(what, FAIL, f"HTTP {answer.status}: {answer.text}")
    if answer.data is None or not answer.message:
        return Check(what, FAIL, f"the answer is no chat completion: {answer.text}")
    return None


def content(message: dict[str, Any]) -> str:
    value = message.get("content")
    return value if isinstance(value, str) else ""


def reasoning(message: dict[str, Any]) -> str:
    """What the reasoning parser separated (vLLM: `reasoning`, older: `reasoning_content`)."""
    for key in ("reasoning", "reasoning_content"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def check_chat(target: Target) -> Check:
    answer = post(target, body(target, "What is the capital of France?", 16))
    bad = refused(answer, "chat")
    if bad:
        return bad
    tokens = answer.usage("completion_tokens")
    if not content(answer.message) and not reasoning(answer.message):
        return Check("chat", FAIL, f"an empty answer (HTTP 200, {tokens} tokens)")
    return Check("chat", PASS, f"answered, {tokens if tokens is not None else '?'} tokens, "
                 f"finish_reason {one_line(str(answer.finish), 40)}")  # fmt: skip


def check_thinking(target: Target) -> Check:
    if target.reasoning is False:
        return Check("thinking", SKIP, "the profile runs no reasoning parser")
    off = post(target, body(target, "Is 17 a prime number?", 32))
    on = post(target, body(target, "Is 17 a prime number?", 32, chat_template_kwargs=THINK_ON))
    for answer, mode in ((off, "off"), (on, "on")):
        bad = refused(answer, "thinking")
        if bad:
            return Check("thinking", FAIL, f"thinking {mode}: {bad.detail}")
    leaked = [m for m, a in (("off", off), ("on", on)) if "</think>" in content(a.message)]
    if leaked:
        return Check("thinking", FAIL, f"thinking {leaked[0]}: a </think> tag is in the content: "
                     "the reasoning parser did not separate it")  # fmt: skip
    if reasoning(off.message):
        return Check("thinking", FAIL, "thinking off (enable_thinking false) still answered "
                     "with reasoning: the switch does not reach the chat template")  # fmt: skip
    if not content(off.message):
        return Check("thinking", FAIL, "thinking off: no content")
    if not reasoning(on.message):
        return Check("thinking", SKIP, "off: content and no reasoning; on: the model wrote no "
                     "thinking to separate (a template without the switch, or random weights)")  # fmt: skip
    return Check("thinking", PASS, f"off: content, no reasoning; on: {len(reasoning(on.message))} "
                 "characters of reasoning separated from the content")  # fmt: skip


class Collected(StreamReader):
    """A stream reader that keeps what the chunks carry: content, reasoning, finish."""

    def __init__(self, where: str) -> None:
        super().__init__(where, 0.0)
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.finish: Any = None

    def _event(self, event: dict[str, Any], data: str) -> None:
        super()._event(event, data)
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str) and delta["content"]:
                self.content.append(delta["content"])
            if isinstance(text := reasoning(delta), str) and text:
                self.reasoning.append(text)
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]


def check_streaming(target: Target) -> Check:
    reader = Collected(target.endpoint.url + CHAT_PATH)
    try:
        run = target.endpoint.stream_chat(body(target, "Count from one to ten.", 24), reader)
        tokens = run.completion_tokens
    except (EngineUnreachable, BadStream) as exc:
        return Check("streaming", FAIL, str(exc))
    pieces = len(reader.content)
    if not reader.done:
        return Check("streaming", FAIL, f"the stream ended without data: [DONE] after "
                     f"{reader.events} events")  # fmt: skip
    if not pieces:
        return Check("streaming", FAIL, f"no content chunk in {reader.events} events")
    if reader.finish is None:
        return Check("streaming", FAIL, "no chunk gave a finish_reason")
    text = "".join(reader.content)
    # A server faster than its reader sends what piled up as one delta (vLLM does): the count
    # of chunks is reported, not judged.
    return Check("streaming", PASS, f"{tokens} tokens in {pieces} content chunks, {len(text)} characters "
                 f"reassembled, finish_reason {one_line(str(reader.finish), 40)}, ended with [DONE]")  # fmt: skip
