"""`profilegen import`: other catalogues brought into this registry."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import EXIT_OK, UsageError, printable
from ..importers.club3090.run import ImportOptions, plan_import
from ..write import write_files
from .common import Command, Context, format_option, pass_context


@click.group("import")
def command() -> None:
    """Import another catalogue's profiles into this registry."""


@command.command("club3090", cls=Command)
@click.argument("source", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--revision", "--rev", "rev", help="Revision to import (a git directory; default: its HEAD)."
)
@click.option("--only", multiple=True, metavar="KEY", help="Import just this key (repeatable).")
@click.option("--dry-run", is_flag=True, help="Report what would be written; write nothing.")
@format_option()
@pass_context
def club3090(
    obj: Context, source: Path, rev: str | None, only: tuple[str, ...], dry_run: bool, fmt: str
) -> int:
    """Import SOURCE (a club-3090 git directory or checkout) at REV into registry/.

    Every file is built and validated before the first one is written. Facts the registry
    cannot model yet are kept verbatim (extra arguments) and listed; where the catalogue's
    registry and its compose disagree, the compose wins and the difference is listed.
    """
    root = obj.root
    try:
        plan = plan_import(root, ImportOptions(source, rev, only, dry_run))
    except UsageError as exc:  # one line, whatever catalogue text it names
        raise UsageError(printable(str(exc))) from None
    changed = [p for p, b in sorted(plan.files.items()) if not p.is_file() or p.read_bytes() != b]
    if not dry_run:
        write_files({p: plan.files[p] for p in changed}, root=root)
    rel = [p.relative_to(root).as_posix() for p in changed]
    if fmt == "json":
        notes = [{"key": n.key, "kind": n.kind, "message": n.message} for n in plan.notes]
        click.echo(
            json.dumps(
                {
                    "keys": plan.keys,
                    "changed": rel,
                    "dry_run": dry_run,
                    "evidence": {"rows": plan.evidence_rows, "profiles": plan.evidence_profiles},
                    "notes": notes,
                },
                indent=2,
            )
        )
        return EXIT_OK
    verb = "would write" if dry_run else "wrote"
    for path in rel:
        click.echo(f"{verb} {path}")
    for note in plan.notes:
        click.echo(printable(f"{note.kind}: {note.key}: {note.message}"), err=True)
    kinds = ("escape", "drift", "note", "unmapped")
    counts = {k: sum(n.kind == k for n in plan.notes) for k in kinds}
    click.echo(
        f"{plan.keys} entries, {len(rel)} files {'to change' if dry_run else 'changed'}; "
        f"{counts['escape']} kept verbatim, {counts['drift']} registry/compose disagreements, "
        f"{counts['note']} other notes; {plan.evidence_rows} benchmark rows as evidence on "
        f"{plan.evidence_profiles} profiles, {counts['unmapped']} rows or tables not mapped"
    )
    return EXIT_OK
