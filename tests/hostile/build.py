"""The hostile corpus's building blocks: what a case is, and how its registry is made."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.fakehub import FakeHub

Setup = Callable[[Path], None]

MODELINE = "# yaml-language-server: $schema=../../schema/{}.schema.json\n"
GPU = "registry/gpus/rtx-3090.yaml"
RIG = "registry/rigs/2x3090.yaml"
MODEL = "registry/models/tiny-7b.yaml"
PROFILE = "registry/profiles/tiny-chat.yaml"
CHILD = "registry/profiles/tiny-chat-long.yaml"
PATCH_FILE = "registry/patches/files/tiny-fix/fix.patch"
LOCK = "profilegen.lock.json"
SECRET = "root:x:0:0"  # the first entry of /etc/passwd, which a symlink may point at
LAYOUT_HINT = "(registry/{0}/ holds one *.yaml file per {1})"


@dataclass(frozen=True)
class Case:
    name: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)
    setup: tuple[Setup, ...] = ()
    args: tuple[str, ...] = ("check",)
    code: int = 1
    # Every located finding the run prints (`file:line: severity: [rule] message`), exactly.
    findings: tuple[str, ...] = ()
    # Other lines the output must hold (a command's own error, a summary).
    says: tuple[str, ...] = ()
    # Text that must never appear (the content of a file outside the repository).
    never: tuple[str, ...] = ()
    bounded: bool = False  # the real CLI in a subprocess, with a time and memory limit
    # Files (beside the case's registry) that must not exist after the run: what a registry
    # value would have made on the host had it run there.
    absent: tuple[str, ...] = ()
    # What the run must leave behind, judged on (root, out) after it.
    leaves: Callable[[Path, Path], None] | None = None
    # Environment of the run ({root} and {out} filled in).
    env: Mapping[str, str] = field(default_factory=dict)
    # A fake Hub for the run (HF_ENDPOINT), set up by this: the repos it serves, how it lies.
    hub: Callable[[FakeHub], None] | None = None


# -- building blocks -------------------------------------------------------------------------


def doc(kind: str, body: str) -> str:
    return MODELINE.format(kind) + body


def gpu(body: str) -> str:
    """A gpu file (id `bad`, file registry/gpus/bad.yaml) with `body` after the modeline."""
    return doc("gpu", body)


def alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return gpu("\n".join(lines) + "\n")


def edit(path: str, old: str, new: str) -> Setup:
    def apply(root: Path) -> None:
        target = root / path
        text = target.read_text(encoding="utf-8")
        assert old in text, f"{path} has no {old!r}"
        target.write_text(text.replace(old, new, 1), encoding="utf-8")

    return apply


def symlink(path: str, target: str) -> Setup:
    def apply(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).symlink_to(target)

    return apply


def fifo(path: str) -> Setup:
    return lambda root: os.mkfifo(root / path)


def folder(path: str) -> Setup:
    return lambda root: (root / path).mkdir(parents=True)


def remove(path: str) -> Setup:
    return lambda root: (root / path).unlink()


def lock_entry(key: str, **changes: object) -> Setup:
    def apply(root: Path) -> None:
        data = json.loads((root / LOCK).read_text())
        data["artifacts"][key].update(changes)
        (root / LOCK).write_text(json.dumps(data, indent=2))

    return apply


def lock_text(text: str) -> Setup:
    return lambda root: (root / LOCK).write_text(text)


def schema_finding(path: str, line: int, message: str, hint: str = "") -> str:
    return f"{path}:{line}: error: [schema] {message}" + (f" ({hint})" if hint else "")


BOMB = "the document expands to more than 50,000 values (an alias bomb?)"
BOMB_HINT = "registry files are small: write values out instead of nesting aliases"
DEEP = "nesting deeper than 64 levels"
OUTSIDE = "resolves outside the repository (a symlink?); only files inside it are read"
TOO_BIG = "is {:,} bytes, more than the 256 KiB profilegen reads"
LOCK_HINT = "run `profilegen lock` with network access to record it again"


def rerender(root: Path) -> None:
    """Regenerates compose/ and docs/ so that only the case's own finding remains."""
    from tests.support.cli import invoke_in

    invoke_in(root, "render", "--all")
