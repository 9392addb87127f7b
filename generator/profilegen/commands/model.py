"""`profilegen model add`: a model entry derived from its checkpoint on the Hub (or on disk)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import Context, pass_context, timeout_option


@click.group("model")
def command() -> None:
    """Add models to the registry from their checkpoints."""


@command.command("add")
@click.argument("repo", metavar="HF_REPO")
@click.option(
    "--revision", help="Commit, branch or tag to read (default: main); a commit is written."
)
@click.option(
    "--gguf",
    metavar="FILE",
    help="The GGUF file (or part of its name, e.g. Q4_K_M) to add from a GGUF repository.",
)
@click.option(
    "--from-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Read a local copy of the checkpoint instead of the Hub (needs its commit: --revision, "
    "or a folder the Hub client downloaded).",
)
@click.option("--id", "model_id", help="Model id (default: from the repository name).")
@click.option("--variant", help="Artifact key (default: from the quantization).")
@click.option("--dry-run", is_flag=True, help="Print the model file; write nothing.")
@timeout_option
@pass_context
def add(
    obj: Context,
    repo: str,
    revision: str | None,
    gguf: str | None,
    from_dir: Path | None,
    model_id: str | None,
    variant: str | None,
    dry_run: bool,
    timeout: float | None,
) -> int:
    """Derive HF_REPO's facts from its config.json or GGUF header and add the model."""
    from ..authoring.model_add import AddOptions  # loads huggingface_hub
    from ..authoring.model_write import run_model_add

    opts = AddOptions(repo, revision, gguf, from_dir, model_id, variant, timeout, dry_run)
    return run_model_add(obj.root, opts)
