"""A committed symlink where profilegen writes carries nothing anywhere: `render --all`, `check`
and every command that writes into the repository refuse it, located, and the place it points
at (a scratch folder standing in for a home folder) is left byte for byte as it was."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from profilegen.write import LinkRefused, write_atomic, write_files
from tests.support.base import build_base
from tests.support.cli import Run, invoke_in
from tests.support.copies import copy_tree
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

SECRET = "root:x:0:0:not-for-the-report"
NO_LINKS = "profilegen writes and removes nothing through a symlink"
HINT = "(delete the link: profilegen writes a folder or file of its own in its place)"


def link_finding(rel: str, target: str, where: str = "outside") -> str:
    return (
        f"{rel}: error: [disk-link] {rel} is a symlink to {target}, {where} the repository: "
        f"{NO_LINKS} {HINT}"
    )


def refusal(rel: str, target: str, where: str = "outside") -> str:
    """What a command other than `render --all` and `check` says (exit 2)."""
    return (
        f"error: cannot access {rel}: is a symlink to {target}, {where} the repository: {NO_LINKS}"
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("out-of-tree") / "base")


@pytest.fixture
def root(base: Path, tmp_path: Path) -> Path:
    return copy_tree(base, tmp_path / "root", symlinks=True)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Someone's own folder outside the repository, which a committed link points at."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "compose.yaml").write_text("services: {mine: {image: busybox}}\n")
    (home / "diary.md").write_text("dear diary\n")
    (home / "chart.svg").write_text("<svg/>\n")
    (home / "secret").write_text(SECRET + "\n")
    (home / "CLI.md").write_text("my notes\n")
    (home / "sub").mkdir()
    (home / "sub" / "compose.yaml").write_text("services: {}\n")
    return home


def snapshot(*folders: Path) -> dict[str, object]:
    """Every entry below the folders, links as links, files by their bytes."""
    seen: dict[str, object] = {}
    for top in folders:
        for dirpath, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                mode = path.lstat().st_mode
                if stat.S_ISLNK(mode):
                    seen[str(path)] = ("link", str(path.readlink()))
                elif stat.S_ISREG(mode):
                    seen[str(path)] = (path.read_bytes(), stat.S_IMODE(mode))
                else:
                    seen[str(path)] = stat.S_IFMT(mode)
    return seen


def replace_with_link(root: Path, rel: str, target: Path | str) -> None:
    path = root / rel
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


def findings(run: Run) -> list[str]:
    return sorted(line for line in run.text.splitlines() if ": error: [" in line)


def unchanged(root: Path, outside: Path, before: dict[str, object]) -> None:
    assert snapshot(root, outside) == before


@pytest.mark.parametrize(
    "args",
    [("render", "--all"), ("render", "--all", "--check"), ("render", "--all", "--format", "json")],
    ids=["render-all", "render-all-check", "render-all-json"],
)
def test_a_profile_folder_linked_out_is_refused_and_nothing_is_written(
    root: Path, outside: Path, args: tuple[str, ...]
) -> None:
    replace_with_link(root, "compose/tiny-chat", outside)
    # A stale file elsewhere: a render that went on would write it.
    (root / "compose/tiny-chat-long/compose.yaml").write_text("edited\n")
    before = snapshot(root, outside)
    run = invoke_in(root, *args)
    assert run.code == 1, run.text
    assert run.err.splitlines() == [
        link_finding("compose/tiny-chat", str(outside)),
        "1 error, 0 warnings",
    ]
    assert run.out == ""
    unchanged(root, outside, before)


def test_check_reports_the_link_once_and_reads_nothing_through_it(
    root: Path, outside: Path
) -> None:
    replace_with_link(root, "compose/tiny-chat", outside)
    (outside / "compose.yaml").write_text(SECRET + "\n")
    before = snapshot(root, outside)
    run = invoke_in(root, "check")
    assert run.code == 1, run.text
    assert findings(run) == [link_finding("compose/tiny-chat", str(outside))]
    assert SECRET not in run.text
    unchanged(root, outside, before)


def test_a_link_to_the_root_folder_lists_nothing_of_it(root: Path, outside: Path) -> None:
    (root / "compose/x").symlink_to("/")
    before = snapshot(root, outside)
    check = invoke_in(root, "check")
    assert check.code == 1, check.text
    assert findings(check) == [link_finding("compose/x", "/")]
    render = invoke_in(root, "render", "--all")
    assert render.code == 1, render.text
    assert render.err.splitlines() == [link_finding("compose/x", "/"), "1 error, 0 warnings"]
    unchanged(root, outside, before)


def test_docs_benchmarks_linked_out_deletes_nothing(root: Path, outside: Path) -> None:
    replace_with_link(root, "docs/benchmarks", outside)
    before = snapshot(root, outside)
    render = invoke_in(root, "render", "--all")
    assert render.code == 1, render.text
    assert render.err.splitlines() == [
        link_finding("docs/benchmarks", str(outside)),
        "1 error, 0 warnings",
    ]
    assert "removed" not in render.text
    check = invoke_in(root, "check")
    assert findings(check) == [link_finding("docs/benchmarks", str(outside))]
    assert "diary.md" not in check.text
    unchanged(root, outside, before)


def test_a_generated_file_linked_out_is_one_finding_and_never_read(
    root: Path, outside: Path
) -> None:
    replace_with_link(root, "compose/tiny-chat/compose.yaml", outside / "secret")
    replace_with_link(root, "docs/CATALOG.md", outside / "secret")
    before = snapshot(root, outside)
    check = invoke_in(root, "check")
    assert check.code == 1, check.text
    assert findings(check) == [
        link_finding("compose/tiny-chat/compose.yaml", str(outside / "secret")),
        link_finding("docs/CATALOG.md", str(outside / "secret")),
    ]
    assert SECRET not in check.text
    render = invoke_in(root, "render", "--all")
    assert render.code == 1 and findings(render) == findings(check), render.text
    unchanged(root, outside, before)


def test_a_link_inside_the_tree_into_the_registry_is_refused(root: Path, outside: Path) -> None:
    """A link that stays inside the repository would still carry the render's writes into
    registry/ (or another generated folder): refused the same way."""
    replace_with_link(root, "compose/tiny-chat", "../registry/profiles")
    replace_with_link(root, "compose/tiny-chat-long", "../compose-elsewhere")
    (root / "compose-elsewhere").mkdir()
    (root / "compose-elsewhere" / "notes.md").write_text("mine\n")
    before = snapshot(root, outside)
    run = invoke_in(root, "render", "--all")
    assert run.code == 1, run.text
    assert run.err.splitlines() == [
        link_finding("compose/tiny-chat", "../registry/profiles", "inside"),
        link_finding("compose/tiny-chat-long", "../compose-elsewhere", "inside"),
        "2 errors, 0 warnings",
    ]
    unchanged(root, outside, before)


def test_the_generated_folder_itself_linked_out(root: Path, outside: Path) -> None:
    replace_with_link(root, "compose", outside)
    before = snapshot(root, outside)
    for args in (("render", "--all"), ("check",)):
        run = invoke_in(root, *args)
        assert run.code == 1, run.text
        assert findings(run) == [link_finding("compose", str(outside))]
    unchanged(root, outside, before)


def test_schema_linked_out_is_refused(root: Path, outside: Path) -> None:
    replace_with_link(root, "schema", outside)
    before = snapshot(root, outside)
    for args in (("schema",), ("schema", "--check")):
        run = invoke_in(root, *args)
        assert (run.code, run.err.splitlines()) == (2, [refusal("schema", str(outside))])
    check = invoke_in(root, "check")
    assert findings(check) == [link_finding("schema", str(outside))], check.text
    unchanged(root, outside, before)


def test_the_lock_linked_out_is_not_written(root: Path, outside: Path) -> None:
    shutil.copy(root / "profilegen.lock.json", outside / "lock.json")
    replace_with_link(root, "profilegen.lock.json", outside / "lock.json")
    before = snapshot(root, outside)
    run = invoke_in(root, "lock", "--offline")
    assert run.code == 2, run.text
    assert run.err.splitlines()[-1] == refusal("profilegen.lock.json", str(outside / "lock.json"))
    unchanged(root, outside, before)


def test_cli_doc_linked_out_is_not_written(root: Path, outside: Path) -> None:
    replace_with_link(root, "docs/CLI.md", outside / "CLI.md")
    before = snapshot(root, outside)
    run = invoke_in(root, "cli-doc")
    assert (run.code, run.err.splitlines()) == (
        2,
        [refusal("docs/CLI.md", str(outside / "CLI.md"))],
    )
    unchanged(root, outside, before)


def test_new_through_a_profiles_folder_linked_inside(root: Path, outside: Path) -> None:
    """registry/ reads a link that stays inside the tree; nothing is written through it."""
    (root / "registry/profiles").rename(root / "kept-profiles")
    replace_with_link(root, "registry/profiles", "../kept-profiles")
    before = snapshot(root, outside)
    run = invoke_in(root, "new", "tiny-new", "--from", "tiny-chat")
    assert run.code == 2, run.text
    assert run.err.splitlines()[-1] == refusal("registry/profiles", "../kept-profiles", "inside")
    unchanged(root, outside, before)


def test_evidence_is_not_recorded_through_a_linked_profile_file(root: Path) -> None:
    from profilegen.authoring.evidence import record_evidence
    from profilegen.registry import open_registry

    (root / "shared").mkdir()
    (root / "registry/profiles/tiny-chat.yaml").rename(root / "shared/tiny-chat.yaml")
    replace_with_link(root, "registry/profiles/tiny-chat.yaml", "../../shared/tiny-chat.yaml")
    before = snapshot(root)
    record = {
        "key": "tiny-boot",
        "date": "2026-12-01",
        "rig": "2x3090",
        "source": "a boot log",
        "summary": "booted",
        "measured": {"boots": True},
    }
    with pytest.raises(LinkRefused) as refused:
        record_evidence(open_registry(root), "tiny-chat", record)
    assert refused.value.filename == "registry/profiles/tiny-chat.yaml"
    assert refused.value.strerror == (
        f"is a symlink to ../../shared/tiny-chat.yaml, inside the repository: {NO_LINKS}"
    )
    assert snapshot(root) == before


def test_a_bundle_named_inside_the_repository_through_a_link(root: Path, outside: Path) -> None:
    (root / "serve").symlink_to(outside)
    before = snapshot(root, outside)
    run = invoke_in(root, "render", "tiny-chat", "-o", str(root / "serve" / "bundle"))
    assert run.code == 2, run.text
    assert run.err.splitlines() == [
        f"error: {root}/serve/bundle: serve is a symlink to {outside}, outside the repository: "
        f"{NO_LINKS} (choose another -o)"
    ]
    unchanged(root, outside, before)


def test_write_files_removes_and_prunes_nothing_through_a_link(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / "docs").mkdir(parents=True)
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "diary.md").write_text("dear diary\n")
    (repo / "docs" / "benchmarks").symlink_to(home / "notes")
    before = snapshot(tmp_path)
    with pytest.raises(LinkRefused) as refused:
        write_files(
            {repo / "docs" / "CATALOG.md": b"# catalogue\n"},
            remove=[repo / "docs" / "benchmarks" / "diary.md"],
            root=repo,
        )
    assert refused.value.filename == "docs/benchmarks"
    with pytest.raises(LinkRefused):
        write_files({}, prune=[repo / "docs" / "benchmarks"], root=repo)
    with pytest.raises(LinkRefused):
        write_atomic(repo / "docs" / "benchmarks" / "x.md", b"x", root=repo)
    assert snapshot(tmp_path) == before
    write_files({repo / "docs" / "CATALOG.md": b"# catalogue\n"}, root=repo)
    assert (repo / "docs" / "CATALOG.md").read_bytes() == b"# catalogue\n"


def test_the_proof_copy_of_new_follows_no_link_out_and_never_loops(
    root: Path, outside: Path
) -> None:
    """`new` (like `model add` and a recorded boot) proves the registry in a scratch copy:
    a link out of the tree (here to a folder holding a FIFO, which a copy would block on or
    fail at) is not followed, and a link back to an ancestor is copied once."""
    os.mkfifo(outside / "pipe")
    (root / "registry/patches/files/tiny-fix/evil").symlink_to(outside)
    (root / "registry/profiles/loop").symlink_to("..")
    before = snapshot(outside)
    run = invoke_in(root, "new", "tiny-new", "--from", "tiny-chat")
    assert run.code == 0, run.text
    assert "wrote registry/profiles/tiny-new.yaml" in run.text
    assert snapshot(outside) == before


TEMPLATE = "templates/compose/header.txt.j2"


def template_finding(problem: str) -> str:
    return f"{TEMPLATE}: error: [layout] header.txt.j2 {problem}"


def test_a_registry_template_linked_out_is_never_read(root: Path, outside: Path) -> None:
    """A registry's own templates/ is read as registry/ is: a template that is a symlink out
    of the repository would copy what it points at into every rendered file."""
    replace_with_link(root, TEMPLATE, outside / "secret")
    finding = template_finding(
        "resolves outside the repository (a symlink?); only files inside it are read"
    )
    before = snapshot(root, outside)
    for args in (("render", "tiny-chat"), ("render", "--all")):
        run = invoke_in(root, *args)
        assert (run.code, run.err.splitlines()) == (1, [finding, "1 error, 0 warnings"]), run.text
        assert SECRET not in run.text
    check = invoke_in(root, "check")
    assert check.code == 1 and findings(check) == [finding], check.text
    assert SECRET not in check.text
    unchanged(root, outside, before)


def test_a_registry_template_that_is_a_fifo_is_refused(root: Path) -> None:
    (root / TEMPLATE).parent.mkdir(parents=True)
    os.mkfifo(root / TEMPLATE)
    run = invoke_in(root, "render", "tiny-chat")
    assert (run.code, run.err.splitlines()) == (
        1,
        [template_finding("is a FIFO, not a regular file"), "1 error, 0 warnings"],
    )
