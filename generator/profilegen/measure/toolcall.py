"""`verify --serving`'s tool call round trip: a `tools` request with `tool_choice` "auto" (the
path that goes through the profile's tool parser: vLLM refuses it without
`--enable-auto-tool-choice --tool-call-parser`, llama-server without `--jinja`), and the call
the parser returns judged against the one asked for.

Where the engine constrains output (vLLM's structured outputs) and the parser's format is
known, the model is made to write exactly that call in the parser's format, so the check judges
the parser for any weights, random ones included; elsewhere a model that answers in text
without a call is reported (`skip`), since only a model decides to call unforced. A call left
in the content as text, or one that comes back wrong, fails.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import one_line
from .functional import FAIL, PASS, SKIP, Check, Target, body, content, post, refused

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "enum": ["Paris"]}},
            "required": ["city"],
        },
    },
}
ARGUMENTS = {"city": "Paris"}
ASK = (
    "What is the weather in Paris right now? You cannot know it yourself: call the "
    "get_weather tool with the city, do not answer in text."
)
# The call as each tool parser reads it from the model's output (vLLM's parser names).
_XML = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n</tool_call>"
)
_HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CALL_TEXT = {"qwen3_coder": _XML, "qwen3_xml": _XML, "hermes": _HERMES}
# Markup that means a call was written but left unparsed in the content.
MARKUP = ("<tool_call>", "<function=", '"arguments"', "[TOOL_CALLS]", "<|tool_call")


def regex_of(text: str) -> str:
    """A regular expression matching exactly `text` (newlines as \\n, which every engine's
    regex grammar reads)."""
    out = []
    for char in text:
        if char == "\n":
            out.append("\\n")
        elif char in ".^$*+?()[]{}|\\":
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _request(target: Target) -> tuple[dict[str, Any], bool]:
    """The request, and whether the model's output is forced into the parser's format."""
    payload = body(target, ASK, 200, tools=[TOOL], tool_choice="auto")
    text = CALL_TEXT.get(target.tool_parser or "")
    field = target.family.output_regex if target.family is not None else None
    if text is None or field is None:
        return payload, False
    *outer, last = field.split(".")
    place = payload
    for name in outer:
        place = place.setdefault(name, {})
    place[last] = regex_of(text)
    return payload, True


def check_tool_call(target: Target) -> Check:
    if target.tools_served is False:
        return Check("tool-call", SKIP, "the profile serves no tool calls (no tool parser)")
    payload, forced = _request(target)
    answer = post(target, payload)
    if answer.status != 200:
        said = f"HTTP {answer.status}: {answer.text}"
        if not re.search("tool|jinja", answer.text, re.IGNORECASE):
            return Check(
                "tool-call", FAIL, f"a tools request with tool_choice auto failed ({said})"
            )
        return Check("tool-call", FAIL, f"a tools request with tool_choice auto was refused "
                     f"({said}): the tool parser is off (vLLM: --enable-auto-tool-choice "
                     "--tool-call-parser; llama-server: --jinja)")  # fmt: skip
    bad = refused(answer, "tool-call")
    if bad:
        return bad
    calls = answer.message.get("tool_calls")
    if calls:
        return _judge(calls, answer.finish, forced)
    text = content(answer.message)
    if forced or any(m in text for m in MARKUP):
        return Check("tool-call", FAIL, "the model wrote a call and the parser returned none: "
                     f"it is in the content as text ({one_line(text, 120)})")  # fmt: skip
    return Check("tool-call", SKIP, "the model answered in text without a call (only a model "
                 "decides to call unforced; random weights never do)")  # fmt: skip


def _judge(calls: Any, finish: Any, forced: bool) -> Check:
    how = "the forced call" if forced else "the model's call"
    if not isinstance(calls, list) or not isinstance(calls[0], dict):
        return Check(
            "tool-call", FAIL, f"tool_calls is not a list of calls: {one_line(str(calls), 120)}"
        )
    function = calls[0].get("function")
    if not isinstance(function, dict):
        return Check(
            "tool-call",
            FAIL,
            f"the call's function is not an object: {one_line(str(function), 120)}",
        )
    name, raw = function.get("name"), function.get("arguments")
    if name != "get_weather":
        return Check(
            "tool-call",
            FAIL,
            f"the parser returned a call of {one_line(repr(name), 120)}, not get_weather",
        )
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        return Check(
            "tool-call", FAIL, f"the call's arguments are not JSON: {one_line(str(raw), 120)}"
        )
    if args != ARGUMENTS:
        return Check("tool-call", FAIL, f"the call's arguments are {one_line(json.dumps(args), 120)}, "
                     f"not {json.dumps(ARGUMENTS)}")  # fmt: skip
    if finish != "tool_calls":
        return Check("tool-call", FAIL, f"a call came back with finish_reason {one_line(repr(finish), 120)}, not "
                     "tool_calls")  # fmt: skip
    return Check("tool-call", PASS, f"{how} came back parsed: get_weather({json.dumps(args)}), "
                 "finish_reason tool_calls")  # fmt: skip
