"""`profilegen artifacts`: every Hub artifact, its files and who uses it."""

from __future__ import annotations

import json
from typing import Any

import click

from ..lockfile.artifacts import artifact_uses
from ..lockfile.lock import read_lock
from ..lockfile.pins import pin_label, pin_of
from ..registry import Registry


def artifact_rows(registry: Registry) -> list[dict[str, Any]]:
    lock = read_lock(registry.root)
    rows = []
    for use in artifact_uses(registry):
        entry = (lock.artifacts.get(use.key) if lock else None) or {}
        listed = entry.get("files") if entry.get("resolved") else None
        # The lock is input too: what is not a file record is left out, not trusted.
        locked = {
            f["path"]: f
            for f in (listed if isinstance(listed, list) else [])
            if isinstance(f, dict) and isinstance(f.get("path"), str)
        }
        files = [
            {
                "path": p,
                "size": locked.get(p, {}).get("size"),
                "sha256": locked.get(p, {}).get("sha256"),
            }
            for p in use.artifact.files
        ]
        pin = pin_of(use.artifact, entry or None)
        rows.append(
            {
                "key": use.key,
                "repo": use.artifact.repo,
                "revision": use.artifact.revision,
                "commit": entry.get("commit") if entry.get("resolved") else None,
                "pinned": pin.pinned,
                "pin": pin_label(use.artifact, pin),
                "kind": use.artifact.kind,
                "files": files,
                "declared_size_bytes": use.artifact.size_bytes,
                "used_by": list(use.used_by),
            }
        )
    return rows


def run_artifacts(registry: Registry, fmt: str) -> int:
    rows = artifact_rows(registry)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        rev = row["revision"] or "main (unpinned)"
        files = ", ".join(f["path"] for f in row["files"]) or "whole repo"
        used = ", ".join(row["used_by"]) or "unused"
        size = row["declared_size_bytes"]
        shown = f"{size / 1e9:.2f} GB" if size is not None else "size not declared"
        click.echo(f"{row['key']}\n  {row['repo']}@{rev}  {shown}  [{files}]")
        click.echo(f"  {row['pin']}")
        click.echo(f"  used by: {used}")
    pinned = sum(row["pinned"] for row in rows)
    click.echo(
        f"{pinned} of {len(rows)} artifacts pinned to a commit; the other {len(rows) - pinned} "
        "are UNPINNED (fetch downloads whatever their branch holds that day)"
    )
    return 0
