"""The engine's command line as data: each argument a flag and its values, computed in Python.

A value is a literal, a variable the entrypoint has validated (`Var`, expanded as `"${NAME}"`
at boot) or a JSON document whose slots are such variables. Dialects (one module per engine
family under `dialects/`) turn a profile's modelled facts into these arguments; the entrypoint
template only lays them out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .quoting import Shell, shell_value
from .shelljson import json_word


@dataclass(frozen=True)
class Var:
    """A shell variable's value at boot, as one word."""

    name: str


@dataclass(frozen=True)
class Json:
    """A JSON document (compact), possibly with `Slot`s filled from variables at boot."""

    value: Any


@dataclass(frozen=True)
class Joined:
    """One word made of literal pieces and variables (`mtp:n_max=${SPEC_N},p_min=0.0`)."""

    parts: tuple[str | Var, ...]


Word = str | int | float | Var | Json | Joined


@dataclass(frozen=True)
class Arg:
    """A flag (or None for positional words) and its values; `fact` says where it comes from."""

    flag: str | None
    values: tuple[Word, ...] = ()
    fact: str = ""

    def shell(self) -> Shell:
        """The argument as shell words: the flag verbatim, each value quoted or expanded."""
        words = [shell_value(self.flag)] if self.flag else []
        words += [word_shell(v) for v in self.values]
        return Shell(" ".join(words))


def word_shell(value: Word) -> str:
    if isinstance(value, Var):
        return f'"${{{value.name}}}"'
    if isinstance(value, Joined):
        return "".join(word_shell(p) if isinstance(p, Var) else shell_value(p) for p in value.parts)
    if isinstance(value, Json):
        return json_word(value.value).text
    return shell_value(literal_text(value))


def literal_text(value: Word) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, Json):
        return json.dumps(value.value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


@dataclass(frozen=True)
class EngineCommand:
    """What the entrypoint execs: the binary, the arguments and, when drafting, the spec ones."""

    binary: tuple[str, ...]
    args: tuple[Arg, ...]
    spec_args: tuple[Arg, ...] = ()
