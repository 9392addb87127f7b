"""`profilegen list`: the catalogue at a glance, optionally as seen from one rig."""

from __future__ import annotations

import json
from dataclasses import dataclass

import click

from .registry import Registry
from .view import list_rows


@dataclass(frozen=True)
class ListOptions:
    fmt: str = "text"
    rig: str | None = None
    fits: bool = False
    detect: bool = False


COLUMNS = ("id", "engine", "status", "rig", "tp", "kv_cache_dtype", "max_model_len", "spec_n", "port")


def run_list(registry: Registry, opts: ListOptions) -> int:
    rows = list_rows(registry)
    if opts.fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return 0
    table = [[str(r[c]) if r[c] is not None else "-" for c in COLUMNS] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in table)) for i, c in enumerate(COLUMNS)]
    click.echo("  ".join(c.upper().ljust(w) for c, w in zip(COLUMNS, widths)).rstrip())
    for row in table:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    return 0
