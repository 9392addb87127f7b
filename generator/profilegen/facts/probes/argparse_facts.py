"""What an argparse parser accepts, option by option: shared by the probes (stdlib only).

The probes run with a release's own Python, beside this file; they import it by name.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import typing
from collections.abc import Callable
from typing import Any


class Refused(Exception):
    pass


def _arity(action: argparse.Action) -> str:
    nargs = action.nargs
    if nargs is None:
        return "1"
    return str(nargs)


def _type_name(action: argparse.Action) -> str | None:
    kind = action.type
    if kind is None:
        return None
    name = getattr(kind, "__qualname__", getattr(kind, "__name__", type(kind).__name__))
    return str(name).split(".<locals>.")[0]


def _default(value: Any) -> Any:
    if value is argparse.SUPPRESS:
        return None
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def _flag(action: argparse.Action) -> dict[str, Any]:
    entry: dict[str, Any] = {"arity": _arity(action)}
    name = _type_name(action)
    if name:
        entry["type"] = name
    if action.choices is not None:
        # None stands for "unset" in a release's choices; no command line can pass it.
        entry["choices"] = [str(c) for c in action.choices if c is not None]
    default = _default(action.default)
    if default is not None:
        entry["default"] = default
    if getattr(action, "deprecated", False):
        entry["deprecated"] = True
    return entry


def refuse_errors(*parsers: Any) -> None:
    """Parser errors raise instead of printing and exiting."""
    for parser in parsers:

        def refuse(message: str) -> typing.NoReturn:
            raise Refused(message)

        parser.error = refuse


def quietly(parse: Callable[[list[str]], Any], words: list[str]) -> bool:
    """Whether `parse(words)` succeeds (the parser's own answer, nothing printed)."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            parse(words)
        except (Refused, SystemExit, ValueError, TypeError):
            return False
    return True


def options(parser: Any, accepts: Callable[[list[str]], bool]) -> dict[str, Any]:
    """Every option of `parser`: flags by their first long name, aliases, positionals; a
    switch's `--no-` form is recorded when the parser accepts it, listed or not."""
    flags: dict[str, Any] = {}
    aliases: dict[str, str] = {}
    positionals = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:
            positionals.append(action.dest)
            continue
        longs = [s for s in action.option_strings if s.startswith("--")]
        canonical = longs[0] if longs else action.option_strings[0]
        entry = _flag(action)
        if "choices" in entry:
            # What the parser takes: a listed choice its converter turns into something else
            # (`None` through optional_type) is refused.
            entry["choices"] = [c for c in entry["choices"] if accepts([canonical, c])]
        negations = [s for s in action.option_strings if s.startswith("--no-")]
        if canonical in negations:
            negations.remove(canonical)
        names = [s for s in action.option_strings if s not in negations and s != canonical]
        if entry["arity"] == "0" and not negations and canonical.startswith("--"):
            candidate = "--no-" + canonical[2:]
            if accepts([candidate]):
                negations.append(candidate)
        if negations:
            entry["negation"] = negations
        for alias in names:
            aliases[alias] = canonical
        flags[canonical] = entry
    return {"flags": flags, "aliases": aliases, "positionals": positionals}
