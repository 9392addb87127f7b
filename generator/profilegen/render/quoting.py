"""Quoting for the two languages we emit into: YAML (Compose) and bash."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from ..errors import printable

# Plain YAML scalars are emitted only when they cannot be read as anything but a string.
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
# Words a YAML 1.1 or 1.2 reader takes for a boolean, null or number when left plain.
YAML_KEYWORDS = frozenset(
    {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~", "nan", "inf"}
)
# Characters that YAML parsers treat as line breaks or refuse outright.
_YAML_BREAKS = re.compile("[\r\x85\u2028\u2029]")
_YAML_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufeff\ufffe\uffff]"
)


@dataclass(frozen=True)
class Interp:
    """Text that deliberately contains Compose interpolation (`${VAR:-default}`)."""

    text: str


@dataclass(frozen=True)
class Shell:
    """A fragment of shell we built ourselves (variable expansions): emitted verbatim."""

    text: str


@dataclass(frozen=True)
class RawYaml:
    """A YAML fragment we built ourselves (a block scalar): emitted verbatim."""

    text: str


def compose_escape(text: str) -> str:
    """A literal `$` must reach the container as `$`: Compose reads `$$` as one `$`."""
    return text.replace("$", "$$")


def yaml_string(text: str) -> str:
    """A YAML scalar that parses back to exactly `text` (JSON is valid YAML)."""
    if _PLAIN.fullmatch(text) and text.lower() not in YAML_KEYWORDS:
        return text
    # \U escapes: YAML does not join the surrogate pairs of json.dumps(ensure_ascii=True).
    return re.sub("[^ -~]", lambda m: f"\\U{ord(m[0]):08x}", json.dumps(text, ensure_ascii=False))


def yaml_value(value: object) -> str:
    """Jinja finalize for Compose templates: every value is quoted or escaped."""
    if isinstance(value, RawYaml):
        return value.text
    if isinstance(value, Interp):
        return yaml_string(value.text)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return yaml_string(compose_escape(str(value)))


def plain_yaml_value(value: object) -> str:
    """Jinja finalize for YAML a program reads (not Compose): quoted, `$` kept as it is."""
    if isinstance(value, RawYaml):
        return value.text
    if value is None or isinstance(value, bool | int | float):
        return yaml_value(value)
    return yaml_string(str(value))


def yaml_block(text: str, indent: int, *, compose: bool = True) -> RawYaml:
    """A literal block scalar when it round-trips exactly, else a quoted string.

    The script is far easier to read as a block, but a block cannot carry every
    string: lines with trailing blanks, blank lines made of spaces, and YAML line
    breaks or unprintable characters fall back to a double-quoted scalar. `compose`
    escapes `$` for Compose interpolation (Kubernetes ConfigMap data is taken as is).
    """
    escaped = compose_escape(text) if compose else text
    lines = escaped.split("\n")
    body = lines[:-1] if escaped.endswith("\n") else lines
    safe = (
        escaped.endswith("\n")
        and not escaped.endswith("\n\n")
        and bool(body)
        and not body[0].startswith((" ", "\t"))
        and not _YAML_BREAKS.search(escaped)
        and not _YAML_UNPRINTABLE.search(escaped)
        and all(line == line.rstrip(" \t") for line in body)
    )
    if not safe:
        return RawYaml(yaml_string(escaped))
    pad = " " * indent
    return RawYaml("|\n" + "\n".join(pad + line if line else "" for line in body))


def comment_lines(text: str) -> str:
    """Turns text into YAML comment lines; no character can end the comment early."""
    cleaned = _YAML_UNPRINTABLE.sub("?", _YAML_BREAKS.sub(" ", text))
    return "\n".join(("# " + line).rstrip() for line in cleaned.split("\n"))


def shell_value(value: object) -> str:
    """Jinja finalize for the entrypoint script: every value is one shell word."""
    if isinstance(value, Shell):
        return value.text
    if value is None:
        return "''"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return shlex.quote(json.dumps(value))
    return shlex.quote(str(value))


def shell_oneline(value: object) -> Shell:
    """Registry text inside a shell comment: a line break would end the comment."""
    text = _YAML_UNPRINTABLE.sub("?", re.sub("[\n\r\x85\u2028\u2029]", " ", str(value)))
    return Shell(printable(text))


def shell_words(values: list[str]) -> Shell:
    """Several shell words, each quoted on its own."""
    return Shell(" ".join(shlex.quote(str(v)) for v in values))
