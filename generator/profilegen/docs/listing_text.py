"""`profilegen list` as text: a table that fits the terminal (`--wide`: every column whole), the
rig and order said above it, and below it the reason for every verdict fit could not give."""

from __future__ import annotations

import re
import textwrap
from typing import Any

import click

from ..errors import printable
from ..model import Rig
from ..registry import Registry
from .choosing import ListOptions, Quality, context_text, figure, here
from .table import Column, layout, notes, render, terminal_width

_SHARE = re.compile(r"^yes, (?P<held>[0-9.e+]+) of (?P<seqs>[0-9]+) at full length$")
# Seen from no rig: what each profile is. Lower worth: kept longer in a narrow terminal.
PLAIN = (
    Column("id", "ID"),
    Column("status", "STATUS", worth=1),
    Column("engine", "ENGINE", worth=4),
    Column("rig", "RIG", worth=3),
    Column("tp", "TP", worth=7),
    Column("kv_cache_dtype", "KV", worth=8),
    Column("ctx", "CONTEXT", worth=2),
    Column("spec_n", "SPEC_N", worth=9),
    Column("quality", "QUALITY", worth=6),
    Column("uses", "FOR", worth=5),
    Column("title", "TITLE", worth=10, flex=True),
    Column("pinned", "PINNED", worth=1),
)
# Seen from a rig: this rig's speed apart from other cards', and the verdict.
ON_RIG = (
    Column("id", "ID"),
    Column("status", "STATUS", worth=2),
    Column("ctx", "CONTEXT", worth=1),
    Column("tok_s", "TOK/S"),
    Column("elsewhere", "ELSEWHERE", worth=3),
    Column("fit", "FIT"),
    Column("quality", "QUALITY", worth=5),
    Column("uses", "FOR", worth=7),
    Column("engine", "ENGINE", worth=6),
    Column("tp", "TP", worth=8),
    Column("title", "TITLE", worth=10, flex=True),
    Column("pinned", "PINNED", worth=9),
)
ORDER = {
    "speed": "tok/s measured on these cards",
    "context": "context, then sequences",
    "quality": "quality (upstream's scores, then its picks)",
}
LEGEND = {
    "elsewhere": "ELSEWHERE: decode tok/s measured on other cards (named), not ranked with "
    "this rig's; re-run the bench here before relying on it.",
    "marked": "(N): decode tok/s measured on other cards, not ranked with this rig's "
    "(--wide names them).",
    "share": "yes, 1.6/4: starts; its KV pool holds 1.6 of its 4 sequences at full length.",
    "would": "at 96k x1: does not start as it renders; would at that context and sequences "
    "(the most it can have).",
}


def echo_listing(
    registry: Registry, rig: Rig | None, rows: list[dict[str, Any]], opts: ListOptions
) -> None:
    width = terminal_width()
    if not rows:
        click.echo("(no profile matches)")
        return
    if rig is None:
        columns = _columns(PLAIN, opts)
        cells = [_plain_cells(r, opts.wide) for r in rows]
        for line in render(columns, cells, width, opts.wide):
            click.echo(line)
        return
    for line in _preamble(registry, rig, opts):
        click.echo(textwrap.fill(line, width, subsequent_indent="  "))
    reasons: list[str] = []
    for_code = "coding" in opts.uses
    cells = [_rig_cells(r, reasons, opts.wide, for_code) for r in rows]
    columns = _columns(ON_RIG, opts)
    legend = _place_elsewhere(columns, cells, rows, width, opts.wide, for_code)
    for line in [*render(columns, cells, width, opts.wide), *notes(reasons, width)]:
        click.echo(line)
    if not opts.wide:
        legend += [LEGEND[k] for k in ("share", "would") if any(_has(c["fit"], k) for c in cells)]
    for text in legend:
        click.echo(textwrap.fill(text, width, subsequent_indent="  "))


def _place_elsewhere(
    columns: tuple[Column, ...],
    cells: list[dict[str, str]],
    rows: list[dict[str, Any]],
    width: int,
    wide: bool,
    for_code: bool,
) -> list[str]:
    """Speeds from other cards in their own column; where it has no room, in TOK/S in
    parentheses (still ranked apart). Returns the legend line that says which."""
    if all(c["elsewhere"] == "-" for c in cells):
        return []
    if "elsewhere" in {c.key for c, _ in layout(columns, cells, width, wide)}:
        return [LEGEND["elsewhere"]]
    for cell, row in zip(cells, rows, strict=True):
        if cell["elsewhere"] != "-":
            cell["tok_s"] = f"({figure(row['speed'], for_code):.0f})"
    return [LEGEND["marked"]]


def _has(fit: str, kind: str) -> bool:
    return fit.startswith("yes, ") if kind == "share" else fit.startswith("at ")


def _columns(columns: tuple[Column, ...], opts: ListOptions) -> tuple[Column, ...]:
    """Quality is kept with the id where the order is by it."""
    if opts.sort != "quality":
        return columns
    return tuple(Column(c.key, c.head, 0) if c.key == "quality" else c for c in columns)


def _preamble(registry: Registry, rig: Rig, opts: ListOptions) -> list[str]:
    cards = " + ".join(registry.gpus[g].name for g in rig.cards)
    what = cards or f"{rig.count} x {registry.gpus[rig.gpu].name}"
    order = ORDER[opts.sort or "speed"]
    if (opts.sort or "speed") == "speed":
        order = ("code " if "coding" in opts.uses else "narrative ") + order
    narrowed = [f"for {' or '.join(opts.uses)}"] if opts.uses else []
    if opts.min_context:
        narrowed.append(f"at least {context_text(opts.min_context)} context")
    return [
        f"rig {rig.id}: {what}" + (f"; {', '.join(narrowed)}" if narrowed else ""),
        f"Order: starts here, {order}, production first.",
    ]


def _common(row: dict[str, Any], wide: bool) -> dict[str, str]:
    q = row["quality"]
    return {
        "id": row["id"],
        "status": row["status"],
        "engine": row["engine"],
        "tp": str(row["tp"]),
        "ctx": f"{context_text(row['max_model_len'], wide)} x{row['max_num_seqs']}",
        "quality": Quality(q["score"], q["figure"], q["pick"]).text(),
        "uses": ", ".join(row["uses"]) or "-",
        "title": printable(row["title"]),
        # The weights are one commit, or UNPINNED: whatever a branch holds when fetched.
        "pinned": "yes" if row["weights_pinned"] else "UNPINNED",
    }


def _plain_cells(row: dict[str, Any], wide: bool) -> dict[str, str]:
    return {
        **_common(row, wide),
        "rig": row["rig"],
        "kv_cache_dtype": row["kv_cache_dtype"] or "-",
        "spec_n": str(row["spec_n"]),
    }


def _rig_cells(
    row: dict[str, Any], reasons: list[str], wide: bool, for_code: bool
) -> dict[str, str]:
    mine, speed = here(row), row["speed"]
    elsewhere = "-"
    if speed and mine is None:
        elsewhere = f"{_tok(speed, wide, for_code)} {speed['rig']}"
    return {
        **_common(row, wide),
        "tok_s": _tok(mine, wide, for_code) if mine else "-",
        "elsewhere": elsewhere,
        "fit": _fit_cell(row["fit"], reasons, wide, (row["max_model_len"], row["max_num_seqs"])),
    }


def _tok(speed: dict[str, Any], wide: bool, for_code: bool) -> str:
    if wide:
        return " / ".join(
            "-" if v is None else f"{v:g}" for v in (speed["narrative"], speed["code"])
        )
    value = figure(speed, for_code)
    return "-" if value is None else f"{value:.1f}"


def _would(would: dict[str, Any], asked: tuple[int, int], wide: bool) -> list[str]:
    """What would start: the profile's context at fewer sequences first, then a shorter
    context at its sequences."""
    context, seqs = asked
    out = []
    if would.get("max_num_seqs"):
        out.append(f"{context_text(context, wide)} x{would['max_num_seqs']}")
    if would.get("max_model_len"):
        out.append(f"{context_text(would['max_model_len'], wide)} x{seqs}")
    return out


def _fit_cell(fit: dict[str, Any], reasons: list[str], wide: bool, asked: tuple[int, int]) -> str:
    """The verdict; short unless wide (`no: memory`, `yes, 1.6/4`, `at 96k x1`)."""
    if fit["fits"] is None:
        reason = printable(fit.get("reason") or fit["verdict"])
        if reason not in reasons:
            reasons.append(reason)
        return f"unknown [{reasons.index(reason) + 1}]"
    shapes = _would(fit.get("would_fit") or {}, asked, wide)
    if shapes:
        return f"no; {' or '.join(shapes)} would" if wide else f"at {shapes[0]}"
    verdict: str = fit["verdict"]
    if wide:
        return verdict
    if "needs_gpus" in fit:
        return f"no: {fit['needs_gpus']} GPUs"
    short = {
        "no: does not boot": "no: memory",
        "no: over the rig's policy": "no: policy",
        "yes: seen serving here (fit predicts no)": "yes: seen",
    }
    if verdict in short:
        return short[verdict]
    m = _SHARE.match(verdict)
    return f"yes, {m['held']}/{m['seqs']}" if m else verdict
