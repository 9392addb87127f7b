"""`render --all --check`: what `render --all` would change, said without writing anything."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import invoke_in

HINT = "(run `profilegen render --all`)"


def test_an_up_to_date_tree_passes(catalogue: Path) -> None:
    run = invoke_in(catalogue, "render", "--all", "--check")
    assert (run.code, run.out, run.err) == (0, "docs/ is up to date (1 files)\n", "")


def test_each_file_it_would_write_or_remove_is_named_and_none_is_touched(catalogue: Path) -> None:
    page = catalogue / "docs/CATALOG.md"
    page.write_text(page.read_text() + "an edit by hand\n")
    ghost = catalogue / "compose/ghost/compose.yaml"
    ghost.parent.mkdir(parents=True)
    ghost.write_text("services: {}\n")
    run = invoke_in(catalogue, "render", "--all", "--check")
    assert run.code == 1
    assert run.err == (
        f"docs/CATALOG.md: stale {HINT}\n"
        f"compose/ghost/compose.yaml: not generated, would be removed {HINT}\n"
    )
    assert run.out == ""
    assert page.read_text().endswith("an edit by hand\n")
    assert ghost.read_text() == "services: {}\n"


def test_a_missing_file_is_named(catalogue: Path) -> None:
    (catalogue / "docs/CATALOG.md").unlink()
    run = invoke_in(catalogue, "render", "--all", "--check")
    assert (run.code, run.err) == (1, f"docs/CATALOG.md: missing {HINT}\n")
    assert not (catalogue / "docs/CATALOG.md").exists()


def test_check_goes_with_all(catalogue: Path) -> None:
    run = invoke_in(catalogue, "render", "--check", "some-profile")
    assert (run.code, run.err) == (
        2,
        "error: --check goes with --all: it compares the checked-in tree\n",
    )
