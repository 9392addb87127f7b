"""Prints the facts of the SGLang installed beside it as JSON: run by that release's own Python.

Not part of profilegen's import graph: `engine facts` runs it with the throw-away
environment's interpreter. It asks SGLang's own server parser (ServerArgs.add_cli_args,
as `sglang.launch_server` builds it) what it accepts.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from argparse_facts import options, quietly, refuse_errors

logging.disable(logging.CRITICAL)


def _env_names() -> list[str]:
    try:
        from sglang.srt.environ import Envs
    except ImportError:
        return []
    return sorted(n for n in vars(Envs) if n.isupper() and n.startswith(("SGLANG_", "SGL_")))


def main() -> None:
    from importlib.metadata import version

    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    refuse_errors(parser)

    def accepts(words: list[str]) -> bool:
        return bool(quietly(parser.parse_args, ["--model-path", "m", *words]))

    found = options(parser, accepts)
    facts: dict[str, Any] = {
        "version": version("sglang"),
        "parser": {
            "positionals": found["positionals"],
            "underscores": accepts(["--context_length", "1024"]),
            "abbreviations": bool(parser.allow_abbrev),
            "repeat": "last-wins",
        },
        "flags": found["flags"],
        "aliases": found["aliases"],
        "json": {},
        "env": _env_names(),
    }
    json.dump(facts, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
