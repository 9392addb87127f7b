"""The command line: parses options, calls one run_* function, maps errors to exit codes."""

from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from .errors import ProfilegenError, RegistryError
from .registry import Registry, find_root, open_registry
from .report import format_findings, summary

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class Group(click.Group):
    """Reports profilegen errors without a traceback and with our exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RegistryError as exc:
            click.echo(format_findings(exc.findings, "text", color=_color()), err=True)
            click.echo(summary(exc.findings), err=True)
            ctx.exit(EXIT_FINDINGS)
        except ProfilegenError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except OSError as exc:
            # The disk or the network said no: the user's environment, not a bug.
            where = f" {exc.filename}" if exc.filename else ""
            click.echo(f"error: cannot access{where}: {exc.strerror or exc}", err=True)
            ctx.exit(EXIT_FINDINGS)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:  # a bug in profilegen, not the user's mistake
            if os.environ.get("PROFILEGEN_DEBUG"):
                traceback.print_exc()
            click.echo(
                f"internal error: {type(exc).__name__}: {exc}\n"
                "This is a bug in profilegen; please report it with PROFILEGEN_DEBUG=1 output.",
                err=True,
            )
            ctx.exit(EXIT_INTERNAL)


def _color() -> bool:
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR")


@dataclass(frozen=True)
class Context:
    root_option: str | None

    @property
    def root(self) -> Path:
        return find_root(explicit=self.root_option)

    def registry(self) -> Registry:
        return open_registry(self.root)


pass_context = click.make_pass_decorator(Context)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    help="Registry root (default: PROFILEGEN_ROOT or the nearest parent with registry/).",
)
@click.version_option(package_name="profilegen")
@click.pass_context
def cli(ctx: click.Context, root: str | None) -> None:
    """Declarative LLM-serving profiles rendered to docker-compose files."""
    ctx.obj = Context(root)


def _exit(code: int) -> None:
    click.get_current_context().exit(code)


FORMAT_TEXT_JSON = click.Choice(["text", "json"])


@cli.command("list")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@click.option("--rig", help="Show how each profile fits this rig (see `fit`).")
@click.option("--fits", is_flag=True, help="With --rig: only profiles predicted to fit.")
@click.option(
    "--detect", is_flag=True, help="Read the local GPUs through NVML and use them as the rig."
)
@pass_context
def list_cmd(obj: Context, fmt: str, rig: str | None, fits: bool, detect: bool) -> None:
    """List the profiles of the registry."""
    from .listing import ListOptions, run_list

    _exit(run_list(obj.registry(), ListOptions(fmt=fmt, rig=rig, fits=fits, detect=detect)))


@cli.command("fit")
@click.argument("profile", required=False)
@click.option("--rig", help="Fit on this rig instead (its GPU and card count).")
@click.option("--tp", type=click.IntRange(min=1), help="Tensor-parallel size.")
@click.option(
    "--gpu-util", type=click.FloatRange(0, 1, min_open=True), help="gpu_memory_utilization."
)
@click.option("--kv-dtype", help="KV-cache dtype (bfloat16, fp8_e4m3; llama.cpp: q8_0, q4_0).")
@click.option("--max-model-len", type=click.IntRange(min=1), help="Context length in tokens.")
@click.option("--max-num-seqs", type=click.IntRange(min=1), help="Concurrent sequences.")
@click.option(
    "--max-num-batched-tokens", type=click.IntRange(min=1), help="Prefill chunk in tokens."
)
@click.option("--spec-n", type=click.IntRange(min=0), help="Draft width; 0 turns the drafter off.")
@click.option(
    "--kv-cache-memory",
    type=click.IntRange(min=1),
    metavar="BYTES",
    help="Pin vLLM's KV pool per GPU (replaces the utilization budget).",
)
@click.option("--weights", help="Another weights variant of the profile's model.")
@click.option(
    "--calibration",
    is_flag=True,
    help="Ignore PROFILE: predicted vs measured for every evidence record (exit 1 past ±5%).",
)
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def fit_cmd(
    obj: Context, /, profile: str | None, fmt: str, calibration: bool, **what_if: Any
) -> None:
    """Predict PROFILE's per-GPU memory budget and KV pool (exit 1 when it does not fit)."""
    from .fit import FitOptions, run_fit

    opts = FitOptions(profile=profile, fmt=fmt, calibration=calibration, **what_if)
    _exit(run_fit(obj.registry(), opts))


@cli.command("show")
@click.argument("profile")
@click.option(
    "--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True
)
@pass_context
def show_cmd(obj: Context, profile: str, fmt: str) -> None:
    """Show one profile fully resolved (PROFILE: id, unique prefix or upstream key)."""
    from .resolve import find_profile
    from .view import profile_view

    registry = obj.registry()
    data = profile_view(registry, find_profile(registry, profile))
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        from .yamlout import dump_yaml

        click.echo(dump_yaml(data), nl=False)
    _exit(EXIT_OK)


@cli.command("schema")
@click.option("--check", is_flag=True, help="Only report schemas that are missing or stale.")
@pass_context
def schema_cmd(obj: Context, check: bool) -> None:
    """Write the JSON Schemas of the registry file kinds into schema/."""
    from .schema import build_schemas, stale_schemas
    from .write import write_files

    folder = obj.root / "schema"
    if check:
        stale = stale_schemas(folder)
        for name in stale:
            click.echo(f"schema/{name}: stale (run `profilegen schema`)", err=True)
        _exit(EXIT_FINDINGS if stale else EXIT_OK)
    changed = write_files({folder / n: b for n, b in build_schemas().items()})
    for path in changed:
        click.echo(f"wrote {path.relative_to(obj.root).as_posix()}")
    _exit(EXIT_OK)


@cli.command("render")
@click.argument("profile", required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write a relocatable bundle (compose, manifest, .env.example, patches/) here.",
)
@click.option("--all", "all_", is_flag=True, help="Rewrite the checked-in compose/ tree.")
@pass_context
def render_cmd(obj: Context, profile: str | None, output: Path | None, all_: bool) -> None:
    """Render PROFILE's compose file to stdout (or a bundle with -o)."""
    from .bundle import RenderOptions, run_render

    _exit(run_render(obj.registry(), RenderOptions(profile, output, all_)))


@cli.group("cache")
def cache_group() -> None:
    """The content-addressed cache of patch files (PROFILEGEN_CACHE)."""


@cache_group.command("add")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@pass_context
def cache_add_cmd(obj: Context, files: tuple[Path, ...]) -> None:
    """Add downloaded patch files to the cache (for air-gapped rigs)."""
    from .cache import cache_add

    for line in cache_add(obj.registry(), list(files)):
        click.echo(line)
    _exit(EXIT_OK)


@cli.command("check")
@click.option(
    "--online", is_flag=True, help="Also verify every artifact on the Hub (HF_ENDPOINT, HF_TOKEN)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
)
@pass_context
def check_cmd(obj: Context, online: bool, fmt: str) -> None:
    """Check the registry, the generated tree and the lock file (exit 1 on findings)."""
    from .check import CheckOptions, run_check

    _exit(run_check(CheckOptions(obj.root_option, fmt, online, _color())))


@cli.command("lock")
@click.option(
    "--offline",
    "offline_only",
    is_flag=True,
    help="Do not ask the Hub: record declared facts, keep still-valid resolved entries.",
)
@pass_context
def lock_cmd(obj: Context, offline_only: bool) -> None:
    """Resolve every artifact on the Hub and every remote patch pin into the lock file."""
    from .online import run_lock

    _exit(run_lock(obj.registry(), offline_only=offline_only))


@cli.command("artifacts")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def artifacts_cmd(obj: Context, fmt: str) -> None:
    """List every Hub artifact the registry uses, with what the lock file knows."""
    from .artifact_list import run_artifacts

    _exit(run_artifacts(obj.registry(), fmt))


@cli.command("new")
@click.argument("new_id")
@click.option("--from", "sibling", required=True, help="Profile to extend (id or upstream key).")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a dotted key, value read as YAML (envelope.max_model_len=131072).",
)
@pass_context
def new_cmd(obj: Context, new_id: str, sibling: str, sets: tuple[str, ...]) -> None:
    """Start profile NEW_ID as a small file that extends a sibling."""
    from .newprofile import NewOptions, run_new

    _exit(run_new(obj.root, NewOptions(new_id, sibling, sets)))


@cli.command("changelog")
@click.argument("profile")
@pass_context
def changelog_cmd(obj: Context, profile: str) -> None:
    """Draft a CHANGELOG entry (Markdown) from PROFILE and its newest evidence."""
    from .changelog import run_changelog

    _exit(run_changelog(obj.registry(), profile))


@cli.command("fetch")
@click.argument("profile")
@click.option(
    "--model-dir",
    required=True,
    envvar="MODEL_DIR",
    show_envvar=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Host folder the compose mounts as the model cache (MODEL_DIR).",
)
@click.option("--dry-run", is_flag=True, help="Print what would be downloaded and where.")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def fetch_cmd(obj: Context, profile: str, model_dir: Path, dry_run: bool, fmt: str) -> None:
    """Download PROFILE's artifacts into MODEL_DIR and verify them against the lock file."""
    from .fetch import FetchOptions, run_fetch

    _exit(run_fetch(obj.registry(), FetchOptions(profile, model_dir, dry_run, fmt)))


def main() -> None:
    cli(prog_name="profilegen")
