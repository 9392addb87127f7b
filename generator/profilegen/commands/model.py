"""`profilegen model add`: a model entry derived from its checkpoint on the Hub (or on disk)."""

from __future__ import annotations

from pathlib import Path

import click
from ruamel.yaml import YAML

from ..errors import EXIT_OK
from .common import (
    Command,
    Context,
    echo_json,
    format_option,
    offline_option,
    pass_context,
    timeout_option,
)


@click.group("model")
def command() -> None:
    """Add models to the registry from their checkpoints."""


@command.command(
    "add", cls=Command, exit_1="the new model does not pass the check (nothing is written)"
)
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
@offline_option("read the copy in the Hugging Face cache (HF_HUB_CACHE), or --from-dir")
@timeout_option
@format_option()
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
    offline: bool,
    timeout: float | None,
    fmt: str,
) -> int:
    """Derive HF_REPO's facts from its config.json or GGUF header and add the model.

    With --format json: the model id, its file, what was read, the lock entries and the
    warnings (with --dry-run, the model document itself).
    """
    from ..authoring.model_add import AddOptions  # loads huggingface_hub
    from ..authoring.model_write import add_model, run_model_add

    opts = AddOptions(repo, revision, gguf, from_dir, model_id, variant, timeout, dry_run, offline)
    if fmt == "text":
        return run_model_add(obj.root, opts)
    added = add_model(obj.root, opts)
    draft = added.draft
    doc = {
        "model": draft.model_id,
        "file": added.file,
        "dry_run": added.dry_run,
        "read": {"from": draft.checkpoint.where, "files": draft.read},
        "notes": list(draft.facts.notes),
        "locked": {
            key: {"resolved": bool(entry["resolved"]), "files": len(entry.get("files") or [])}
            for key, entry in added.entries.items()
        },
        "findings": [f.as_json() for f in added.warnings],
    }
    if added.dry_run:
        doc["document"] = YAML(typ="safe", pure=True).load(added.text)
    echo_json(doc)
    return EXIT_OK
