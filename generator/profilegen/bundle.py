"""`profilegen render`: stdout, a relocatable bundle, or the whole checked-in tree."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

import click

from .cache import collect_patch_files, sha256_hex
from .errors import ProfilegenError
from .registry import Registry
from .render import COMPOSE_DIR, plan_all, render_profile
from .resolve import find_profile
from .write import write_atomic, write_files

GENERATED_NAMES = frozenset({"compose.yaml", "patches.manifest.json", ".env.example"})


@dataclass(frozen=True)
class RenderOptions:
    profile: str | None
    output: Path | None
    all: bool


def run_render(registry: Registry, opts: RenderOptions) -> int:
    if opts.all:
        if opts.profile or opts.output:
            raise ProfilegenError(
                "--all renders every profile into compose/; give no PROFILE or -o"
            )
        return _render_all(registry)
    if not opts.profile:
        raise ProfilegenError("name a PROFILE to render (or use --all)")
    profile = find_profile(registry, opts.profile)
    rendered = render_profile(registry, profile)
    if opts.output is None:
        click.echo(rendered.compose.decode(), nl=False)
        return 0
    files = {name: content for name, content in rendered.files().items()}
    # Everything is gathered and verified before the first byte is written.
    patch_files = collect_patch_files(registry, profile.patches)
    for entry in rendered.manifest.patches:
        for f in entry.files:
            content = patch_files[f"{entry.bundle_dir}/{f.path}"]
            if sha256_hex(content) != f.sha256:
                raise ProfilegenError(f"{entry.id}/{f.path} does not match the manifest")
    files.update(patch_files)
    out = opts.output
    if out.exists() and not out.is_dir():
        raise ProfilegenError(f"{out} exists and is not a folder")
    for name, content in sorted(files.items()):
        executable = name.endswith(".sh")
        mode = stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH
        write_atomic(out / name, content, mode=mode | (stat.S_IXUSR if executable else 0))
    click.echo(
        f"wrote {out}/ ({len(files)} files): docker compose -f {out / 'compose.yaml'} up", err=True
    )
    return 0


def _render_all(registry: Registry) -> int:
    plan = plan_all(registry)
    changed = write_files({registry.root / rel: content for rel, content in plan.items()})
    from .docs import remove_orphan_pages

    profiles = {rel.split("/")[1] for rel in plan if rel.startswith(f"{COMPOSE_DIR}/")}
    removed = remove_orphans(registry.root, profiles)
    removed += remove_orphan_pages(registry.root, list(plan))
    for path in changed:
        click.echo(f"wrote {path.relative_to(registry.root).as_posix()}")
    for path in removed:
        click.echo(f"removed {path.relative_to(registry.root).as_posix()}")
    if not changed and not removed:
        click.echo(f"{COMPOSE_DIR}/ and docs/ are up to date ({len(plan)} files)")
    return 0


def orphan_dirs(root: Path, keep: set[str]) -> list[Path]:
    folder = root / COMPOSE_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in keep)


def remove_orphans(root: Path, keep: set[str]) -> list[Path]:
    """Deletes generated files of profiles that no longer exist (nothing else)."""
    removed = []
    for folder in orphan_dirs(root, keep):
        for name in GENERATED_NAMES:
            path = folder / name
            if path.is_file():
                path.unlink()
                removed.append(path)
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed
