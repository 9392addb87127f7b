"""Prints the facts of the vLLM installed beside it as JSON: run by that release's own Python.

Not part of profilegen's import graph: `engine facts` runs it with the throw-away
environment's interpreter, where vLLM is installed and profilegen is not. It asks vLLM's own
`vllm serve` parser, built on the CPU platform, what it accepts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import sys
import types
import typing
from typing import Any

from argparse_facts import options, quietly, refuse_errors

logging.disable(logging.CRITICAL)


def parsers() -> tuple[Any, Any]:
    from vllm import platforms
    from vllm.platforms.cpu import CpuPlatform

    platforms.current_platform = CpuPlatform()
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(prog="vllm")
    subs = top.add_subparsers(dest="subparser")
    serve = ServeSubcommand().subparser_init(subs)
    refuse_errors(top, serve)
    return top, serve


def _literal_values(hint: Any) -> list[str] | None:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return [str(v) for v in typing.get_args(hint)]
    if origin in (typing.Union, types.UnionType):
        values: list[str] = []
        for arm in typing.get_args(hint):
            if arm is type(None):
                continue
            found = _literal_values(arm)
            if found is None:
                return None
            values += found
        return values or None
    return None


def _dataclass_keys(cls: Any) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(cls, include_extras=False)
    except Exception:  # a hint that names something not importable on CPU
        hints = {}
    keys = sorted(f.name for f in dataclasses.fields(cls) if f.init)
    values = {}
    for key in keys:
        found = _literal_values(hints.get(key))
        if found:
            values[key] = found
    return {"keys": keys, "values": values}


def _field_hints(cls: Any) -> dict[str, Any]:
    """Each field's type, evaluated one by one (a hint that cannot be evaluated is skipped)."""
    module = sys.modules[cls.__module__]
    hints = {}
    for field in dataclasses.fields(cls):
        hint = field.type
        if isinstance(hint, str):
            try:
                hint = eval(hint, vars(module))  # the release's own annotation text
            except Exception:
                continue
        hints[field.name] = hint
    return hints


def _json_flags() -> dict[str, Any]:
    from vllm.config import CompilationConfig, SpeculativeConfig
    from vllm.engine.arg_utils import EngineArgs

    out: dict[str, Any] = {
        "--speculative-config": _dataclass_keys(SpeculativeConfig),
        "--compilation-config": _dataclass_keys(CompilationConfig),
    }
    classes: list[Any] = [EngineArgs]
    with contextlib.suppress(ImportError):
        from vllm.entrypoints.openai.cli_args import FrontendArgs

        classes.append(FrontendArgs)
    for cls in classes:
        for name, hint in _field_hints(cls).items():
            flag = "--" + name.replace("_", "-")
            if flag in out:
                continue
            arms = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
            config = next((a for a in arms if dataclasses.is_dataclass(a)), None)
            if config is not None:
                out[flag] = _dataclass_keys(config)
            elif any(a is dict or typing.get_origin(a) is dict for a in arms):
                out[flag] = {"free": True}
    return out


def main() -> None:
    import vllm
    import vllm.envs as envs

    top, serve = parsers()

    def accepts(words: list[str]) -> bool:
        return bool(quietly(top.parse_args, ["serve", *words]))

    found = options(serve, accepts)
    parser = {
        "positionals": found["positionals"],
        "underscores": accepts(["--max_model_len", "1024"]),
        "abbreviations": bool(getattr(serve, "allow_abbrev", False)),
        "repeat": "last-wins",
    }
    json_flags = {k: v for k, v in _json_flags().items() if k in found["flags"]}
    facts = {
        "version": vllm.__version__,
        "parser": parser,
        "flags": found["flags"],
        "aliases": found["aliases"],
        "json": json_flags,
        "env": sorted(envs.environment_variables),
    }
    json.dump(facts, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
