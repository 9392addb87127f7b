"""What the import refuses, at the file and line of the catalogue that says it, writing nothing:
a patch it cannot carry (a folder missing or a symbolic link, an installer the boot must run
with no folder mounted) and a models file it cannot read (bad YAML, a forbidden tag, a bad id)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .fixtures import MODEL, VLLM_COMPOSE, base_files, git, write_tree
from .test_club3090 import run, snapshot

COMPOSE = "models/tiny-9b/vllm/compose/dual/int4/mtp.yml"
FOLDER = "models/tiny-9b/vllm/patches/tiny-fix"
MODELS = "scripts/lib/profiles/models/tiny-9b.yml"


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _catalogue(repo: Path, files: dict[str, str], drop: str | None = None) -> str:
    """A catalogue committed to a git repository (with `drop`, a file or folder, left out);
    returns the commit."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    write_tree(repo, files)
    if drop is not None:
        target = repo / drop
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "catalogue")
    return git(repo, "rev-parse", "HEAD")


def _refused(target: Path, repo: Path, *args: str) -> str:
    before = snapshot(target)
    result = run(target, "import", "club3090", str(repo), *args)
    assert result.code == 2, result.text
    assert "Traceback" not in result.text
    assert snapshot(target) == before  # nothing written
    return result.err.strip()


def test_a_missing_patch_folder_is_refused_at_the_compose_line_that_mounts_it(
    tmp_path: Path, target: Path
) -> None:
    repo = tmp_path / "club-3090"
    rev = _catalogue(repo, base_files(), drop=FOLDER)
    line = _line(VLLM_COMPOSE, "patches/tiny-fix:")
    assert _refused(target, repo, "--rev", rev) == (
        f"error: {COMPOSE}:{line}: the patch folder {FOLDER} this compose mounts is missing at "
        f"{rev[:8]}: the import takes a patch only from files of the catalogue itself, and the "
        "server would start without it"
    )


@pytest.mark.parametrize("source", ["git", "folder"])
@pytest.mark.parametrize("where", ["the folder", "a file in it"])
def test_a_symlinked_patch_folder_is_refused(
    tmp_path: Path, target: Path, source: str, where: str
) -> None:
    repo = tmp_path / "club-3090"
    repo.mkdir()
    write_tree(repo, base_files())
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "install.sh").write_text("#!/bin/bash\necho not the patch\n")
    if where == "the folder":
        shutil.rmtree(repo / FOLDER)
        (repo / FOLDER).symlink_to(outside)
        linked = "is a symbolic link"
    else:
        (repo / FOLDER / "install.sh").unlink()
        (repo / FOLDER / "install.sh").symlink_to(outside / "install.sh")
        linked = f"holds a symbolic link ({FOLDER}/install.sh)"
    args: list[str] = []
    at = "the work tree"
    if source == "git":
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "catalogue")
        at = git(repo, "rev-parse", "HEAD")[:8]
        args = ["--rev", at]
    line = _line(VLLM_COMPOSE, "patches/tiny-fix:")
    assert _refused(target, repo, *args).startswith(
        f"error: {COMPOSE}:{line}: the patch folder {FOLDER} this compose mounts {linked} at {at}:"
    )


def test_an_installer_the_boot_must_run_without_its_folder_mounted_is_refused(
    tmp_path: Path, target: Path
) -> None:
    compose = "".join(
        line for line in VLLM_COMPOSE.splitlines(keepends=True) if "patches/tiny-fix:" not in line
    )
    repo = tmp_path / "club-3090"
    rev = _catalogue(repo, {**base_files(), COMPOSE: compose})
    line = _line(compose, "tiny-fix/install.sh")
    assert _refused(target, repo, "--rev", rev) == (
        f"error: {COMPOSE}:{line}: the boot runs /etc/club3090/tiny-fix/install.sh and stops if "
        "it fails, but the compose mounts no patch folder at /etc/club3090/tiny-fix"
    )


@pytest.mark.parametrize(
    ("model", "needle", "message"),
    [
        (
            MODEL.replace("family: tiny-dense", 'family: !!python/object/apply:os.system ["id"]'),
            "family:",
            "not valid YAML (could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system')",
        ),
        (
            MODEL.replace("id: tiny-9b", "id: Tiny 9B/../x"),
            "id:",
            "id 'Tiny 9B/../x' is not a valid id (^[a-z0-9][a-z0-9._-]{0,79}$)",
        ),
        (MODEL.replace("id: tiny-9b", "id: 9"), "id:", "id '9' is not a valid id"),
        (MODEL.replace("id: tiny-9b", "id: [tiny-9b]"), "id:", "id \"['tiny-9b']\" is not"),
    ],
    ids=["forbidden-tag", "bad-id", "number-id", "list-id"],
)
def test_a_models_file_that_cannot_be_read_is_named_at_its_line(
    tmp_path: Path, target: Path, model: str, needle: str, message: str
) -> None:
    repo = tmp_path / "club-3090"
    rev = _catalogue(repo, {**base_files(), MODELS: model})
    err = _refused(target, repo, "--rev", rev)
    assert err.startswith(f"error: {MODELS}:{_line(model, needle)}: {message}"), err
    assert "has no scripts/lib/profiles/models file upstream" not in err
