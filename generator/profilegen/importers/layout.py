"""How a maintainer laid out a registry file survives a re-import.

Each full-line comment block of the old file goes back before the key it annotated, or before
the nearest enclosing key the new file still writes on a line of its own; a mapping or list
the old file wrote on one line (or on lines of their own) is written that way again.

Keys are followed by indentation, the way the files are written (block mappings, `- ` list
items); a list item is named by its first line. The file's opening comments are the
importer's own header and are not carried. A comment whose key and every enclosing key are
gone is reported, not kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Path = tuple[str, ...]

# `key:` or `- key:` at the start of a line; the key is plain or quoted, never a comment.
_KEY_LINE = re.compile(
    r"^(?P<pad> *)(?P<dash>- )?(?P<key>\"[^\"]*\"|'[^']*'|[^\s#\"'{\[][^:]*?):(?: |$)"
)


@dataclass(frozen=True)
class Carried:
    text: str
    dropped: tuple[str, ...]  # dotted key paths whose comments had nowhere to go


# A value written as a literal or folded block (`key: |`, `key: >-`): the lines below it that
# are indented deeper are its text, whatever they look like.
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*\s*(#.*)?$")


def _scan(lines: list[str]) -> list[tuple[str, Path | None]]:
    """Each line as ("key", its key path), ("comment", None) or ("other", None): a
    continuation, a blank line or the text of a block scalar."""
    out: list[tuple[str, Path | None]] = []
    stack: list[tuple[int, str]] = []
    scalar_indent: int | None = None  # inside a block scalar of a key at this indent
    for line in lines:
        stripped = line.lstrip()
        if scalar_indent is not None and (
            not stripped or len(line) - len(stripped) > scalar_indent
        ):
            out.append(("other", None))
            continue
        scalar_indent = None
        m = _KEY_LINE.match(line)
        if stripped.startswith("#") or m is None:
            out.append(("comment" if stripped.startswith("#") else "other", None))
            continue
        indent = len(m["pad"])
        names: list[tuple[int, str]] = []
        if m["dash"]:
            names.append((indent, line.strip()))  # the item, named by its first line
            indent += 2
        names.append((indent, m["key"].strip("\"'")))
        while stack and stack[-1][0] >= names[0][0]:
            stack.pop()
        stack += names
        if _BLOCK_SCALAR.match(line[m.end() :].strip()):
            scalar_indent = indent
        out.append(("key", tuple(name for _, name in stack)))
    return out


def _blocks(text: str) -> dict[Path, list[str]]:
    """Comment blocks of `text` by the key path of the line that follows each."""
    lines = text.splitlines()
    blocks: dict[Path, list[str]] = {}
    pending: list[str] = []
    seen_key = False
    for line, (kind, path) in zip(lines, _scan(lines), strict=True):
        if kind == "comment":
            if seen_key:  # the opening block is the header
                pending.append(line.strip())
        elif path is not None:
            seen_key = True
            if pending:
                blocks[path] = pending
            pending = []
        elif line.strip():
            pending = []  # a continuation line: the block annotated what came before it
    return blocks


def styles(old: str) -> dict[Path, str]:
    """Key paths whose value the old file wrote on the key's line ("flow": `key: {...}` or
    `key: [...]`) or on the lines below it ("block")."""
    lines = old.splitlines()
    out: dict[Path, str] = {}
    for line, (_, path) in zip(lines, _scan(lines), strict=True):
        m = _KEY_LINE.match(line)
        if path is None or m is None:
            continue
        rest = line[m.end() :].strip()
        if m["dash"]:
            out[path[:-1]] = "block"  # the item itself: a flow item would start with `- {`
        if rest.startswith(("{", "[")):
            out[path] = "flow"
        elif not rest or rest.startswith("#"):
            out[path] = "block"
    return out


def carry_comments(old: str, new: str) -> Carried:
    """`new` with the comment blocks of `old` put back."""
    blocks = _blocks(old)
    if not blocks:
        return Carried(new, ())
    lines = new.splitlines()
    where = {path: i for i, (_, path) in enumerate(_scan(lines)) if path is not None}
    before: dict[int, list[str]] = {}
    dropped = []
    for path, block in blocks.items():
        target = next((path[:n] for n in range(len(path), 0, -1) if path[:n] in where), None)
        if target is None:
            dropped.append(".".join(p for p in path if not p.startswith("- ")))
            continue
        before.setdefault(where[target], []).extend(block)
    out = []
    for i, line in enumerate(lines):
        pad = " " * (len(line) - len(line.lstrip()))
        out += [f"{pad}{comment}" for comment in before.get(i, [])]
        out.append(line)
    return Carried("\n".join(out) + "\n", tuple(dropped))
