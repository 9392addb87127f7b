"""Generated docs/ pages: present, byte-identical to a fresh render, none orphaned."""

from __future__ import annotations

from collections.abc import Iterator

from ...docs.catalog import BENCHMARKS_DIR, DOCS_DIR, orphan_pages
from ...errors import Finding, Location
from ...generated.links import through_link
from .base import CheckContext, rule

HINT = "run `profilegen render --all` and commit the result; never edit docs/ pages by hand"


def first_difference(old: bytes, new: bytes) -> int:
    """The 1-based line where two versions of a page first differ."""
    old_lines, new_lines = old.split(b"\n"), new.split(b"\n")
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return number
    return min(len(old_lines), len(new_lines))


@rule(
    "docs-stale",
    "every generated docs/ page exists and matches a fresh render of the registry",
    kind="generated",
)
def docs_stale(ctx: CheckContext) -> Iterator[Finding]:
    pages = {rel: content for rel, content in ctx.plan.items() if rel.startswith(f"{DOCS_DIR}/")}
    for rel, content in sorted(pages.items()):
        path = ctx.root / rel
        if through_link(ctx.root, rel):
            continue  # disk-link reports the symlink; nothing is read through it
        if not path.is_file():
            yield ctx.report(Location(rel), f"generated page {rel} is missing", hint=HINT)
            continue
        current = path.read_bytes()
        if current != content:
            line = first_difference(current, content)
            yield ctx.report(
                Location(rel, line),
                f"generated page {rel} is stale (differs from a fresh render from line {line})",
                hint=HINT,
            )
    linked = through_link(ctx.root, BENCHMARKS_DIR)  # then disk-link reports it, unlisted
    for path in [] if linked else orphan_pages(ctx.root, list(pages)):
        rel = path.relative_to(ctx.root).as_posix()
        if path.is_symlink():
            continue
        yield ctx.report(
            Location(rel),
            f"{rel} belongs to no model with a profile",
            hint="`profilegen render --all` removes it",
        )
