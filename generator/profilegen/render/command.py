"""The engine's command line as data: each argument a flag and its values, computed in Python.

A value is a literal, a variable the entrypoint has validated (`Var`, expanded as `"${NAME}"`
at boot) or a JSON document whose slots are such variables. Dialects (one module per engine
family under `dialects/`) turn a profile's modelled facts into these arguments; the entrypoint
template only lays them out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .quoting import Shell, shell_value
from .shelljson import Slot, json_word


@dataclass(frozen=True)
class Var:
    """A shell variable's value at boot, as one word."""

    name: str


@dataclass(frozen=True)
class Json:
    """A JSON document (compact), possibly with `Slot`s filled from variables at boot."""

    value: Any


Word = str | int | float | Var | Json


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

    def literal(self) -> list[str] | None:
        """The words when no value depends on a variable, else None."""
        if any(
            isinstance(v, Var) or (isinstance(v, Json) and _has_slot(v.value)) for v in self.values
        ):
            return None
        words = [self.flag] if self.flag else []
        return words + [literal_text(v) for v in self.values]


def word_shell(value: Word) -> str:
    if isinstance(value, Var):
        return f'"${{{value.name}}}"'
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


def _has_slot(value: Any) -> bool:
    if isinstance(value, Slot):
        return True
    if isinstance(value, dict):
        return any(_has_slot(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_slot(v) for v in value)
    return False


@dataclass(frozen=True)
class EngineCommand:
    """What the entrypoint execs: the binary, the arguments and, when drafting, the spec ones."""

    binary: tuple[str, ...]
    args: tuple[Arg, ...]
    spec_args: tuple[Arg, ...] = ()
    # Shell lines the entrypoint runs before the arguments are built (value normalisation).
    prelude: tuple[str, ...] = field(default=())

    def flags(self) -> list[str]:
        return [a.flag for a in (*self.args, *self.spec_args) if a.flag]
