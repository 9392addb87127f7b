"""A hidden entry anywhere in registry/ is reported like any stray file, located: nothing in a
pull request goes unseen because its name starts with a dot. The one exception is an empty
`.gitkeep` (what `profilegen init` writes to keep an empty folder in git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.copies import copy_tree
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

KINDS = "gpus, rigs, engines, models, drafters, patches, profiles, gateways"
TOP = f"(registry files live in registry/<kind>/: {KINDS})"
PROFILES = "(registry/profiles/ holds one *.yaml file per profile)"
FACTS = "(registry/engines/facts/ holds one <engine-id>.json per engine)"
OUTSIDE = "resolves outside the repository (a symlink?); only files inside it are read"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("hidden") / "base")


def dotted(text: str) -> list[str]:
    """The findings about an entry whose name starts with a dot."""
    return sorted(line for line in text.splitlines() if "/." in line.split(":")[0])


def test_hidden_entries_in_every_registry_folder_are_warnings(base: Path, tmp_path: Path) -> None:
    root = copy_tree(base, tmp_path / "root", symlinks=True)
    files = {
        "registry/.DS_Store": b"\0",
        "registry/profiles/.gitkeep": b"",
        "registry/profiles/.tiny-chat.yaml.swp": b"\0\1",
        "registry/profiles/.tiny-shadow.yaml": b"id: tiny-shadow\n",
        "registry/rigs/.gitkeep": b"not empty\n",
        "registry/engines/facts/.vllm-old.json": b"{}\n",
        "registry/patches/files/.old/fix.patch": b"old\n",
    }
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(content)
    (root / "registry/.drafts").mkdir()
    run = invoke_in(root, "check", "--verbose")
    assert run.code == 0, run.text
    assert dotted(run.out) == sorted(
        [
            f"registry/.DS_Store: warning: [layout] .DS_Store is a hidden file: it is not read {TOP}",
            f"registry/.drafts: warning: [layout] .drafts is a hidden folder: it is not read {TOP}",
            "registry/engines/facts/.vllm-old.json: warning: [layout] .vllm-old.json is a hidden "
            f"file: it is not read {FACTS}",
            "registry/patches/files/.old: warning: [patch-vendored] .old belongs to no vendored "
            "patch: it is not read (registry/patches/files/<patch-id>/ holds the files of that "
            "vendored patch)",
            "registry/profiles/.tiny-chat.yaml.swp: warning: [layout] .tiny-chat.yaml.swp is a "
            f"hidden file: it is not read {PROFILES}",
            "registry/profiles/.tiny-shadow.yaml: warning: [layout] .tiny-shadow.yaml is a hidden "
            f"file: it is not read {PROFILES}",
            "registry/rigs/.gitkeep: warning: [layout] .gitkeep is a hidden file: it is not read "
            "(registry/rigs/ holds one *.yaml file per rig)",
        ]
    )
    assert "tiny-shadow" not in invoke_in(root, "list").out  # reported, never loaded


def test_a_gitkeep_that_is_a_link_out_is_an_error(base: Path, tmp_path: Path) -> None:
    root = copy_tree(base, tmp_path / "root", symlinks=True)
    (root / "registry/profiles/.gitkeep").symlink_to("/etc/passwd")
    run = invoke_in(root, "check")
    assert run.code == 1, run.text
    assert dotted(run.out) == [
        f"registry/profiles/.gitkeep: error: [layout] .gitkeep {OUTSIDE}",
    ]
    assert "root:x:0:0" not in run.text


def test_what_a_vendored_patch_folder_holds_beside_its_files(base: Path, tmp_path: Path) -> None:
    root = copy_tree(base, tmp_path / "root", symlinks=True)
    folder = root / "registry/patches/files/tiny-fix"
    (folder / ".fix.patch.orig").write_text("old\n")
    (folder / "notes").mkdir()
    (folder / "notes" / "todo.txt").write_text("later\n")
    (folder / "evil").symlink_to("/etc/passwd")
    (folder / "elsewhere").symlink_to("/etc")
    run = invoke_in(root, "check", "--verbose")
    assert run.code == 1, run.text
    rel = "registry/patches/files/tiny-fix"
    hint = f"({rel}/ holds the files registry/patches/tiny-fix.yaml lists)"
    assert sorted(line for line in run.out.splitlines() if line.startswith(rel)) == [
        f"{rel}/.fix.patch.orig: warning: [patch-vendored] .fix.patch.orig is a hidden file: "
        f"it is not read {hint}",
        f"{rel}/elsewhere: error: [patch-vendored] elsewhere {OUTSIDE} {hint}",
        f"{rel}/evil: error: [patch-vendored] evil {OUTSIDE} {hint}",
        f"{rel}/notes/todo.txt: warning: [patch-vendored] todo.txt is not listed: it is not read "
        f"{hint}",
    ]
    assert "root:x:0:0" not in run.text
